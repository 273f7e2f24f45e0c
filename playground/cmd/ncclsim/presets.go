package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/distributed-nav/distributed-nav/playground/service"
)

func runPresets(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("presets", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	list, err := service.New().Presets()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, list)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
	}
	return tw.Flush()
}
