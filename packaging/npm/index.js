'use strict';
// memdecay: memory decay inside SQLite, as a loadable extension.
//
//   const Database = require('better-sqlite3');
//   const memdecay = require('memdecay');
//   const db = new Database('memory.db');
//   memdecay.load(db);
//   db.prepare('SELECT effective_weight(0.5, 0.005, 500) AS w').get();

const fs = require('fs');
const path = require('path');

// The library for each platform the package carries, by process.platform
// and process.arch, in a folder named as make dist names it. SQLite derives
// the entry point (sqlite3_memdecay_init) from the file name.
const LIBRARIES = {
  'linux-x64': 'linux-amd64/memdecay.so',
  'linux-arm64': 'linux-arm64/memdecay.so',
  'win32-x64': 'windows-amd64/memdecay.dll',
};

// The absolute path of the bundled extension for the running platform, for
// db.loadExtension.
function getLoadablePath() {
  const running = `${process.platform}-${process.arch}`;
  const library = LIBRARIES[running];
  if (!library) {
    throw new Error(`memdecay: no bundled extension for ${running}; this package carries ${Object.keys(LIBRARIES).join(', ')}`);
  }
  const file = path.join(__dirname, 'lib', library);
  if (!fs.existsSync(file)) {
    throw new Error(`memdecay: the bundled extension ${file} is missing; reinstall the memdecay package`);
  }
  return file;
}

// Load memdecay's SQL functions into db, a better-sqlite3 Database (or any
// object with loadExtension(path)).
function load(db) {
  if (!db || typeof db.loadExtension !== 'function') {
    throw new TypeError('memdecay.load: db must be a better-sqlite3 Database (an object with loadExtension)');
  }
  db.loadExtension(getLoadablePath());
}

module.exports = { getLoadablePath, load };
