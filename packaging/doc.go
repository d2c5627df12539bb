// Package packaging holds no code: its directory has the files the .deb and
// .rpm packages are built from (nfpm.yaml, the maintainer scripts, the
// default config), and its test checks them against .goreleaser.yaml, the
// unit file and the config loader.
package packaging
