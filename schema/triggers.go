package schema

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"sync"
)

// Triggers are a database's triggers: name → the CREATE statement
// sqlite_master keeps for it.
func Triggers(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, sql FROM main.sqlite_master WHERE type = 'trigger'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	triggers := map[string]string{}
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			return nil, err
		}
		triggers[name] = text
	}
	return triggers, rows.Err()
}

// OwnTriggers are the triggers memworker's migrations leave in a database
// of its own tables (Triggers), read once from a database migrated to the
// latest version in memory, through the database/sql driver named driver.
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
	return Triggers(context.Background(), db)
}

// OnlyOwnTriggers says whether a database's triggers are exactly
// memworker's own (OwnTriggers): none of an app's, and none of memworker's
// that an app rewrote.
func OnlyOwnTriggers(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, driver string) (bool, error) {
	own, err := OwnTriggers(driver)
	if err != nil {
		return false, fmt.Errorf("memworker's own triggers: %w", err)
	}
	triggers, err := Triggers(ctx, q)
	if err != nil {
		return false, err
	}
	return maps.Equal(triggers, own), nil
}
