package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lanleader/lanleader/httpapi"
)

func statusCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("status", stderr)
	addr := fs.String("http", httpapi.DefaultAddr, "address of the node's status endpoint (its --http)")
	asJSON := fs.Bool("json", false, "print the raw JSON status")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	doc, err := httpapi.FetchStatus(ctx, *addr)
	if err != nil {
		return fmt.Errorf("is lanleader running with --http %s? %w", *addr, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	return httpapi.WriteTable(stdout, doc)
}
