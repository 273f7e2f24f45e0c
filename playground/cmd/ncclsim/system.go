package main

// This file holds the flags of every command that models a system (topo,
// tune, estimate, step, export-tuner) and the one loader behind them:
// which topology (--preset or --xml), how many identical nodes (--nodes),
// the NCCL environment (--env, validated as NCCL v2.30.7-1 reads it) and
// the P2P support the driver reports (--p2p).

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/presets"
	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// envFlag collects repeated --env NAME=VALUE flags.
type envFlag []string

func (e *envFlag) String() string     { return strings.Join(*e, " ") }
func (e *envFlag) Set(v string) error { *e = append(*e, v); return nil }

// systemFlags are the flags that choose and configure the modelled system.
// A command registers them with register and reads them with load.
type systemFlags struct {
	preset string
	xml    string
	nodes  int
	env    envFlag
	p2p    string
}

// register adds --preset, --xml, --nodes, --env and --p2p to fs.
func (f *systemFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.preset, "preset", "", "built-in system (see 'ncclsim presets')")
	fs.StringVar(&f.xml, "xml", "", "NCCL topology XML file (as NCCL_TOPO_DUMP_FILE writes it); - reads stdin")
	fs.IntVar(&f.nodes, "nodes", 1, "number of identical nodes")
	fs.Var(&f.env, "env", "NCCL variable as NAME=VALUE (repeatable)")
	fs.StringVar(&f.p2p, "p2p", "auto", "P2P support the driver reports: auto (from the topology), all, none or nvlink")
}

// loadedSystem is one host of the system the flags name, with --p2p
// applied but not yet replicated over --nodes: topo replicates it,
// model.Build does for the tuning commands.
type loadedSystem struct {
	// name is the preset name or the --xml argument as given ("-" for
	// standard input); description is the preset's or the XML's.
	name        string
	description string
	host        *topo.System
	nodes       int
	warnings    []topo.Warning
	env         ncclenv.Env
	// problems are what ncclenv.Validate found in env (warnings only:
	// errors fail load).
	problems []ncclenv.Problem
}

// load checks the flags and reads the system they name; "--xml -" reads
// stdin. Problems with --env (unknown or deprecated names, values NCCL
// would misread) and topology warnings are printed to stderr; errors among
// the --env problems are usage errors, deprecated names are applied as NCCL
// applies them.
func (f *systemFlags) load(stdin io.Reader, stderr io.Writer) (*loadedSystem, error) {
	if (f.preset == "") == (f.xml == "") {
		return nil, usagef("give exactly one of --preset NAME or --xml FILE")
	}
	if f.nodes < 1 || f.nodes > topo.MaxHosts {
		return nil, usagef("--nodes %d: want 1..%d", f.nodes, topo.MaxHosts)
	}
	env, err := ncclenv.ParseAssignments(f.env)
	if err != nil {
		return nil, usageError{fmt.Errorf("--env: %w", err)}
	}
	problems := ncclenv.Validate(env)
	for _, p := range problems {
		fmt.Fprintf(stderr, "ncclsim: --env %s\n", p)
	}
	if ncclenv.HasErrors(problems) {
		return nil, usagef("--env has errors (listed above)")
	}
	l := &loadedSystem{nodes: f.nodes, env: env, problems: problems}
	if f.preset != "" {
		p, err := presets.Get(f.preset)
		if err != nil {
			return nil, usageError{err}
		}
		l.name, l.description = p.Name, p.Description
		if l.host, l.warnings, err = p.System(); err != nil {
			return nil, err
		}
	} else {
		if l.host, l.warnings, err = readXML(f.xml, stdin); err != nil {
			return nil, err
		}
		l.name, l.description = f.xml, l.host.Description
	}
	for _, w := range l.warnings {
		fmt.Fprintf(stderr, "ncclsim: topology: %v\n", w)
	}
	if f.p2p != "auto" {
		p2p, err := topo.ParseP2PSupport(f.p2p)
		if err != nil {
			return nil, usageError{fmt.Errorf("--p2p: %w", err)}
		}
		c := *l.host
		c.P2P = p2p
		l.host = &c
	}
	return l, nil
}

// readXML parses the topology XML file name, or stdin when name is "-".
func readXML(name string, stdin io.Reader) (*topo.System, []topo.Warning, error) {
	r := stdin
	if name != "-" {
		fh, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		defer fh.Close()
		r = fh
	}
	sys, warns, err := topo.ParseXML(r)
	if err != nil {
		return nil, warns, fmt.Errorf("parse topology %s: %w", name, err)
	}
	return sys, warns, nil
}

// envWords renders env as NAME=VALUE words in name order.
func envWords(env ncclenv.Env) []string {
	var out []string
	for _, n := range env.Names() {
		v, _ := env.Lookup(n)
		out = append(out, n+"="+v)
	}
	return out
}
