package schema

import (
	"database/sql"
	"fmt"
	"sync"
)

// OwnTriggers are the triggers memworker's migrations leave in a database
// of its own tables: name → the CREATE statement sqlite_master keeps for
// it, read once from a database migrated to the latest version in memory
// (through the database/sql driver named driver). A file whose triggers
// are exactly these carries none of an app's, and none of its own that an
// app rewrote.
func OwnTriggers(driver string) (map[string]string, error) {
	ownTriggersOnce.Do(func() { ownTriggers, ownTriggersErr = readOwnTriggers(driver) })
	return ownTriggers, ownTriggersErr
}

var (
	ownTriggersOnce sync.Once
	ownTriggers     map[string]string
	ownTriggersErr  error
)

func readOwnTriggers(driver string) (map[string]string, error) {
	db, err := sql.Open(driver, "file:mem-own-triggers?mode=memory")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection, one in-memory database
	if _, err := Up(db); err != nil {
		return nil, fmt.Errorf("schema: migrating a database in memory: %w", err)
	}
	rows, err := db.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	own := map[string]string{}
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			return nil, err
		}
		own[name] = text
	}
	return own, rows.Err()
}
