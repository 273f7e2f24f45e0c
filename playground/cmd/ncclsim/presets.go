package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/distributed-nav/distributed-nav/playground/presets"
)

// presetJSON is one row of "ncclsim presets --json".
type presetJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func runPresets(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("presets", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	list, err := presets.List()
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]presetJSON, 0, len(list))
		for _, p := range list {
			out = append(out, presetJSON{Name: p.Name, Description: p.Description})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
	}
	return tw.Flush()
}
