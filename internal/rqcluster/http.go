package rqcluster

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Query runs one read-only statement on the node's own database
// (level=none: not forwarded to the leader, so a follower answers from what
// it has applied) and returns its rows. Values are decoded as int64
// (integers), float64 (reals, and any value of a column rqlite types
// "real"), string, []byte (columns rqlite types "blob") or nil. A statement
// error is returned as an error carrying rqlite's message.
func (n *Node) Query(ctx context.Context, sql string) ([][]any, error) {
	var resp queryResponse
	if err := n.postJSON(ctx, "/db/query?level=none", []string{sql}, &resp); err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("node %s: %s", n.ID, resp.Error)
	}
	if len(resp.Results) != 1 {
		return nil, fmt.Errorf("node %s: %d results for one statement", n.ID, len(resp.Results))
	}
	r := resp.Results[0]
	if r.Error != "" {
		return nil, fmt.Errorf("node %s: %s", n.ID, r.Error)
	}
	rows := make([][]any, 0, len(r.Values))
	for _, raw := range r.Values {
		row := make([]any, len(raw))
		for i, v := range raw {
			typ := ""
			if i < len(r.Types) {
				typ = strings.ToLower(r.Types[i])
			}
			val, err := decodeValue(v, typ)
			if err != nil {
				return nil, fmt.Errorf("node %s: column %d: %w", n.ID, i, err)
			}
			row[i] = val
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Execute runs statements through the node's /db/execute (forwarded to the
// leader by a follower). Each statement is a string, or a []any of SQL and
// its parameters as rqlite takes them ([sql, p1, p2, ...], or [sql,
// map[string]any{...}] for named parameters). It fails on the first
// statement that failed.
func (n *Node) Execute(ctx context.Context, stmts ...any) error {
	var resp struct {
		Results []struct {
			Error string `json:"error"`
		} `json:"results"`
		Error string `json:"error"`
	}
	if err := n.postJSON(ctx, "/db/execute", stmts, &resp); err != nil {
		return err
	}
	if resp.Error != "" {
		return fmt.Errorf("node %s: %s", n.ID, resp.Error)
	}
	for i, r := range resp.Results {
		if r.Error != "" {
			return fmt.Errorf("node %s: statement %d: %s", n.ID, i+1, r.Error)
		}
	}
	if len(resp.Results) != len(stmts) {
		return fmt.Errorf("node %s: %d results for %d statements", n.ID, len(resp.Results), len(stmts))
	}
	return nil
}

type queryResponse struct {
	Results []struct {
		Columns []string            `json:"columns"`
		Types   []string            `json:"types"`
		Values  [][]json.RawMessage `json:"values"`
		Error   string              `json:"error"`
	} `json:"results"`
	Error string `json:"error"`
}

func decodeValue(raw json.RawMessage, typ string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case json.Number:
		isReal := strings.Contains(typ, "real") || strings.Contains(typ, "floa") || strings.Contains(typ, "doub")
		if !isReal {
			if i, err := v.Int64(); err == nil {
				return i, nil
			}
		}
		return v.Float64()
	case string:
		if typ == "blob" {
			return base64.StdEncoding.DecodeString(v)
		}
		return v, nil
	default:
		return v, nil
	}
}

func (n *Node) getJSON(ctx context.Context, path string, into any) error {
	code, body, err := n.get(ctx, path)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, code, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// get makes one GET request of at most a few seconds.
func (n *Node) get(ctx context.Context, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	return do(req)
}

func (n *Node) postJSON(ctx context.Context, path string, body, into any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	code, out, err := do(req)
	if err != nil {
		return fmt.Errorf("node %s: %w", n.ID, err)
	}
	if code != http.StatusOK {
		return fmt.Errorf("node %s: POST %s: %d %s", n.ID, path, code, strings.TrimSpace(string(out)))
	}
	if err := json.Unmarshal(out, into); err != nil {
		return fmt.Errorf("node %s: POST %s: %w: %s", n.ID, path, err, out)
	}
	return nil
}

func do(req *http.Request) (int, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return 0, nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// freePorts returns k distinct loopback ports that were free a moment ago.
func freePorts(k int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for len(ports) < k {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
