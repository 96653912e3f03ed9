package rqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
)

// LastTxRows is the rows each statement of a connection's last committed
// transaction changed.
func LastTxRows(ctx context.Context, conn *sql.Conn) (rows []int64, err error) {
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*rqConn)
		if !ok {
			return errors.New("not an rqlite connection")
		}
		rows = c.committed
		return nil
	})
	return rows, err
}

// Backup writes the cluster's database, as the leader has it at the node
// address nodeURL, to path. The download is bounded as a write is (rqliteWriteTimeout) and not
// capped: it is as large as the database.
func Backup(ctx context.Context, nodeURL, path string) error {
	u, err := url.Parse(nodeURL)
	if err != nil {
		return errors.New("backup: the node's address does not parse")
	}
	u.Path, u.RawQuery = "/db/backup", ""
	ctx, cancel := context.WithTimeoutCause(ctx, rqliteWriteTimeout, &noAnswerError{after: rqliteWriteTimeout})
	defer cancel()
	req, err := http.NewRequestWithContext(context.WithValue(ctx, uncappedKey{}, true), http.MethodGet, u.String(), nil)
	if err != nil {
		return errors.New("backup: the node's address does not parse")
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		req.SetBasicAuth(u.User.Username(), pass)
		u.User = nil
		req.URL = u
	}
	resp, err := rqliteHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("backup: %s", oneLine(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("backup: %s: %s", resp.Status, oneLine(string(body)))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("backup: %s", oneLine(err.Error()))
	}
	return f.Close()
}

// realJSON sends a float64 as a JSON number rqlite binds as REAL: with a
// decimal point even when integral (2.0, not 2, which binds as INTEGER).
type realJSON float64

func (r realJSON) MarshalJSON() ([]byte, error) {
	b := strconv.AppendFloat(nil, float64(r), 'g', -1, 64)
	if !bytes.ContainsAny(b, ".eE") {
		b = append(b, ".0"...)
	}
	return b, nil
}
