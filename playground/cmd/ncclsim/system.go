package main

// This file holds the flags of every command that models a system (topo,
// tune, estimate, step, export-tuner): which topology (--preset or --xml),
// how many identical nodes (--nodes), the NCCL environment (--env) and the
// P2P support the driver reports (--p2p). They become a service.Request;
// package service validates them.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

// envFlag collects repeated --env NAME=VALUE flags.
type envFlag []string

func (e *envFlag) String() string     { return strings.Join(*e, " ") }
func (e *envFlag) Set(v string) error { *e = append(*e, v); return nil }

// systemFlags are the flags that choose and configure the modelled system.
// A command registers them with register and reads them with request.
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

// request turns the flags into the service's request; "--xml -" reads
// stdin, "--xml FILE" the file (at most service.MaxXMLBytes).
func (f *systemFlags) request(stdin io.Reader) (*service.Request, error) {
	if (f.preset == "") == (f.xml == "") {
		return nil, usagef("give exactly one of --preset NAME or --xml FILE")
	}
	if f.nodes < 1 {
		// The service reads 0 as "the default"; the flag's default is 1.
		return nil, usagef("--nodes %d: want 1..%d", f.nodes, service.MaxNodes)
	}
	req := &service.Request{Preset: f.preset, Nodes: f.nodes, P2P: f.p2p, Env: f.env}
	if f.xml != "" {
		text, err := readInput(f.xml, stdin, service.MaxXMLBytes)
		if err != nil {
			return nil, err
		}
		req.XML, req.XMLName = text, f.xml
		if text == "" {
			return nil, fmt.Errorf("parse topology %s: the file is empty", f.xml)
		}
	}
	return req, nil
}

// report prints what the service found in the inputs (deprecated or
// questionable --env values, topology warnings) to stderr.
func report(stderr io.Writer, c service.Checked) {
	for _, p := range c.Problems {
		fmt.Fprintf(stderr, "ncclsim: --env %s\n", p)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(stderr, "ncclsim: topology: %v\n", w)
	}
}

// cliError turns a service error into what the command prints: an input
// error becomes a usage error naming the flag (the --env problems are
// listed first), a topology the parser refused names the file.
func cliError(err error, req *service.Request, stderr io.Writer) error {
	var fe *service.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	for _, w := range fe.Warnings {
		fmt.Fprintf(stderr, "ncclsim: topology: %v\n", w)
	}
	switch fe.Field {
	case "env":
		if len(fe.Problems) > 0 {
			for _, p := range fe.Problems {
				fmt.Fprintf(stderr, "ncclsim: --env %s\n", p)
			}
			return usagef("--env has errors (listed above)")
		}
	case "xml":
		if req != nil && req.XMLName != "" {
			return fmt.Errorf("parse topology %s: %s", req.XMLName, fe.Message)
		}
	case "preset":
		return usageError{errors.New(fe.Message)} // the message names the preset
	case "nccl_tests", "log":
		return errors.New(fe.Message) // a problem in a file's text, named in the message
	case "":
		return errors.New(fe.Message)
	}
	return usagef("--%s: %s", flagName(fe.Field), fe.Message)
}

// flagName is the ncclsim flag of a service field.
func flagName(field string) string {
	switch field {
	case "mode":
		return "model"
	case "envdump":
		return "env"
	}
	return strings.ReplaceAll(field, "_", "-")
}

// openInput opens name, or returns stdin for "-".
func openInput(name string, stdin io.Reader) (io.Reader, func(), error) {
	if name == "-" {
		if stdin == nil {
			return nil, nil, fmt.Errorf("%s: standard input is not read here", name)
		}
		return stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// readInput reads up to limit bytes of name (or stdin for "-").
func readInput(name string, stdin io.Reader, limit int64) (string, error) {
	r, closeFn, err := openInput(name, stdin)
	if err != nil {
		return "", err
	}
	defer closeFn()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return "", fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return string(b), nil
}

// writeJSON prints v indented, as every --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
