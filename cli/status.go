package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/httpapi"
)

func newStatusCmd() *cobra.Command {
	var (
		addr, configPath string
		asJSON           bool
		timeout          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "print this node's status from its HTTP endpoint",
		Long: `Status asks the local node's status endpoint (run's --http) for its role,
leader, term and jobs, and prints them as a table (or the JSON document).
With --config it reads the endpoint address from the file's election.http.`,
		Example: `  lanleader status
  lanleader status --config /etc/lanleader/lanleader.yaml
  lanleader status --http 127.0.0.1:7484 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, err := endpointAddr(cmd, configPath, addr)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			doc, err := httpapi.FetchStatus(ctx, addr)
			if err != nil {
				return fmt.Errorf("is lanleader running with --http %s? %s", addr, strings.TrimPrefix(err.Error(), "httpapi: "))
			}
			return printDoc(cmd.OutOrStdout(), asJSON, doc, func(w io.Writer) error { return httpapi.WriteTable(w, doc) })
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "http", httpapi.DefaultAddr, "address of the node's status endpoint (its --http)")
	fs.StringVarP(&configPath, "config", "c", "", "read the endpoint address from this config file")
	fs.BoolVar(&asJSON, "json", false, "print the raw JSON status")
	fs.DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

// endpointAddr is the status endpoint to ask: --http, or, with --config
// and no --http, the file's election.http.
func endpointAddr(cmd *cobra.Command, configPath, addr string) (string, error) {
	if configPath == "" || cmd.Flags().Changed("http") {
		return addr, nil
	}
	f, err := config.LoadWith(configPath, config.Options{ElectionKeys: electionKeys(BuiltinModes())})
	if err != nil {
		return "", ConfigError{err}
	}
	if f.Election.HTTP != nil {
		addr = *f.Election.HTTP
	}
	if addr == "" {
		return "", ConfigError{fmt.Errorf("%s: election.http is empty: the node serves no status", f.Where("election.http"))}
	}
	return addr, nil
}

// printDoc writes a fetched document as indented JSON or as its table.
func printDoc(w io.Writer, asJSON bool, doc any, table func(io.Writer) error) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	return table(w)
}
