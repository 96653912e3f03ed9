// Package packaging holds what make dist builds from (python/, npm/,
// dist.sh) and, behind the dist build tag, the tests that install and use
// the packages it writes (make test-dist).
package packaging
