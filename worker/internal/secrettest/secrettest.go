// Package secrettest holds what the tests that no password is ever
// printed share: the passwords they try, the look for one in a message,
// and a loopback address nothing answers on. Only tests import it.
package secrettest

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// Head and Tail are the text of every test password around its special
// character: neither part may appear in any message.
const Head, Tail = "Zx9kQ", "Wv3mR"

// passwordChars is one password per character class: letters, digits,
// each reserved or sub-delimiter character, non-ASCII, bad escapes.
var passwordChars = []string{"", "7", "%", "/", "#", "?", "@", ":", " ", "+", "=", "!", "$", "&", "'", "(", ")",
	"*", ",", ";", "[", "]", "é", "日本", "%zz", "%4", "%%", "/12/", "@@", "\t", "\\", "\"", "<>", "`", "^", "|", "{}"}

// Passwords are the passwords the tests try.
func Passwords() []string {
	var out []string
	for _, c := range passwordChars {
		out = append(out, Head+c+Tail)
	}
	// A password that starts with digits and a slash parses as a port and
	// a path: http://user:12/...@host.
	return append(out, "12/"+Head+Tail, "4001?"+Head+"@"+Tail, "1#"+Head+Tail)
}

// Leaks reports the secret's text found in msg, "" when none is.
func Leaks(msg, pw string) string {
	for _, s := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw), Head, Tail} {
		if s != "" && strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

// ClosedPort is a loopback address nothing listens on.
func ClosedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
