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

// SQLite derives the entry point (sqlite3_memdecay_init) from this file name.
const LIBRARY = 'memdecay.so';

// The absolute path of the bundled extension, for db.loadExtension.
function getLoadablePath() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`memdecay: this package bundles a Linux x86-64 library; ${process.platform}/${process.arch} is not supported`);
  }
  const file = path.join(__dirname, 'lib', LIBRARY);
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
