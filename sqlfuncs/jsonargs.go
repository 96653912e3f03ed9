package sqlfuncs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// JSON arguments (curves, tiers, policy params, tags) are read strictly:
// exactly one JSON value, no key given twice (the last one would silently
// win), and every problem said in the caller's terms, never as a Go type.

// jsonProblem is what is wrong with a JSON text, phrased to follow the
// argument's name: "is not valid JSON: …".
type jsonProblem string

func (p jsonProblem) Error() string { return string(p) }

// readJSON parses text as one JSON value: objects as map[string]any,
// arrays as []any, numbers as json.Number (as written), strings, bools and
// nil. A key given twice in an object is refused, naming it and where.
func readJSON(text string) (any, error) {
	type frame struct {
		obj    map[string]any
		arr    []any
		object bool
		key    string // the key whose value comes next
		// wantKey: an object's next token is a key (or its end)
		wantKey bool
		path    string // where this container is, for messages
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var stack []*frame
	started := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxProblem(err, started)
		}
		started = true
		var top *frame
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		if top != nil && top.object && top.wantKey {
			if k, ok := tok.(string); ok {
				if _, dup := top.obj[k]; dup {
					return nil, jsonProblem(fmt.Sprintf("has the key %q twice%s", k, jsonWhere(top.path)))
				}
				top.key, top.wantKey = k, false
				top.obj[k] = nil // taken, so a second one is caught
				continue
			}
		}
		var value any
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) == maxJSONDepth {
				return nil, jsonProblem(fmt.Sprintf("is nested more than %d deep", maxJSONDepth))
			}
			path := ""
			if top != nil {
				path = jsonChild(top.path, top.object, top.key, len(top.arr))
			}
			f := &frame{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{'), path: path}
			if f.object {
				f.obj = map[string]any{}
			} else {
				f.arr = []any{}
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'):
			stack = stack[:len(stack)-1]
			value = top.obj
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			value = top.arr
		default:
			value = tok
		}
		if len(stack) == 0 {
			if _, err := dec.Token(); err != io.EOF {
				return nil, jsonProblem("is not valid JSON: more follows the value")
			}
			return value, nil
		}
		parent := stack[len(stack)-1]
		if parent.object {
			parent.obj[parent.key] = value
			parent.wantKey = true
		} else {
			parent.arr = append(parent.arr, value)
		}
	}
}

// maxJSONDepth bounds nesting: no argument needs more than three levels,
// and a deeper one (50,000 '[' in a row) would cost memory quadratic in its
// depth for the paths kept to name where a problem is.
const maxJSONDepth = 32

// jsonChild is the path of a value inside a container at path.
func jsonChild(path string, object bool, key string, index int) string {
	if !object {
		return fmt.Sprintf("%s[%d]", path, index)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonWhere(path string) string {
	if path == "" {
		return ""
	}
	return " (in " + path + ")"
}

func syntaxProblem(err error, started bool) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF) && !started:
		return jsonProblem("is empty (want JSON)")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return jsonProblem("is not valid JSON: it ends before the value is complete")
	case errors.As(err, &se):
		return jsonProblem(fmt.Sprintf("is not valid JSON: %s (at byte %d)", se.Error(), se.Offset))
	}
	return jsonProblem("is not valid JSON: " + err.Error())
}

// describeJSON names a JSON value's kind for messages, with the value when
// it is short.
func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return string(x)
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("text %q", x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}

// jsonFloat reads a JSON number; anything else, or a number too large for
// a float, is an error naming arg.
func jsonFloat(fn, arg string, v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		if v == nil {
			return 0, argErr(fn, arg, "is null (want a number)")
		}
		return 0, argErr(fn, arg, "must be a number (got %s)", describeJSON(v))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if math.IsInf(f, 0) {
		return 0, argErr(fn, arg, "must be finite (got %s)", n)
	}
	if err != nil {
		return 0, argErr(fn, arg, "is not a number (got %s)", n)
	}
	return f, nil
}
