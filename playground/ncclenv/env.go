// Package ncclenv holds the NCCL environment a simulated communicator sees:
// variable names mapped to the strings a user would export, with typed
// accessors that parse them the way NCCL does.
package ncclenv

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Env is an immutable set of NCCL environment variables. The zero value is an
// empty environment in which every variable takes its default.
type Env struct {
	vals map[string]string
}

// New returns an Env holding a copy of kv.
func New(kv map[string]string) Env {
	m := make(map[string]string, len(kv))
	for k, v := range kv {
		m[k] = v
	}
	return Env{vals: m}
}

// ParseAssignments builds an Env from "NAME=VALUE" strings, as given to
// `ncclsim --env`. A later assignment of the same name wins, as in a shell.
func ParseAssignments(list []string) (Env, error) {
	m := make(map[string]string, len(list))
	for _, a := range list {
		name, val, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return Env{}, fmt.Errorf("env assignment %q: want NAME=VALUE", a)
		}
		m[name] = strings.TrimSpace(val)
	}
	return Env{vals: m}, nil
}

// Lookup returns the value of name and whether it is set.
func (e Env) Lookup(name string) (string, bool) {
	v, ok := e.vals[name]
	return v, ok
}

// Names returns the set variable names in sorted order.
func (e Env) Names() []string {
	out := make([]string, 0, len(e.vals))
	for k := range e.vals {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// With returns a copy of e with name set to value.
func (e Env) With(name, value string) Env {
	m := make(map[string]string, len(e.vals)+1)
	for k, v := range e.vals {
		m[k] = v
	}
	m[name] = value
	return Env{vals: m}
}

// Int returns the integer value of name, or def when it is unset or empty.
// Like NCCL's integer parameters it accepts decimal, 0x hex and 0 octal
// (strtoll with base 0, https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/param.cc#L78-L105).
func (e Env) Int(name string, def int64) (int64, error) {
	v, ok := e.vals[name]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return def, fmt.Errorf("%s=%q: not an integer", name, v)
	}
	return n, nil
}
