package runner

import (
	"os"
	"syscall"
)

// ownerOf is the uid that owns the file fi describes.
func fileOwner(fi os.FileInfo) int { return int(fi.Sys().(*syscall.Stat_t).Uid) }
