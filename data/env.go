// Package data embeds the project's fact tables so that Go code (the CLI,
// the generator and the wasm playground) reads the same files at run time
// without touching the disk.
package data

import "embed"

// Env holds the environment-variable tables, env/*.csv: one row per variable
// NCCL (nccl.csv) or PyTorch (torch.csv) reads at the pinned release, with at
// least the columns name, default and type.
//
//go:embed env/*.csv
var Env embed.FS

// GPUs is gpus.csv: per-GPU dense BF16 tensor throughput and memory, each
// row with the URL the number was published at. The step projection
// derives compute time from it.
//
//go:embed gpus.csv
var GPUs []byte
