/** The absolute path of the bundled extension for the running platform (linux-x64, linux-arm64, win32-x64), for db.loadExtension. */
export function getLoadablePath(): string;
/** Load memdecay's SQL functions into a better-sqlite3 Database. */
export function load(db: { loadExtension(path: string): unknown }): void;
