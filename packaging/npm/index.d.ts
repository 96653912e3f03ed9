/** The absolute path of the bundled memdecay.so, for db.loadExtension. */
export function getLoadablePath(): string;
/** Load memdecay's SQL functions into a better-sqlite3 Database. */
export function load(db: { loadExtension(path: string): unknown }): void;
