//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyReload relays SIGHUP, which makes serve read its configuration files and
// certificate again, to c.
func notifyReload(c chan<- os.Signal) { signal.Notify(c, syscall.SIGHUP) }

// notifyBackup relays SIGUSR1, which asks serve for a backup at once, to c.
func notifyBackup(c chan<- os.Signal) { signal.Notify(c, syscall.SIGUSR1) }

// signalsUsage is the signals section of serve -h.
const signalsUsage = "  SIGINT, SIGTERM         shut down (--shutdown-delay, then --shutdown-timeout for requests in flight)\n" +
	"  SIGHUP                  read --litellm-config (or --providers-config and --model-groups) and\n" +
	"                          --tls-cert/--tls-key again; what does not load is logged, the rest kept\n" +
	"  SIGUSR1                 write a backup of the bbolt database now (--backup-dir)"

// backupNowHint tells switchyard backup's user how to get a running server's backup.
const backupNowHint = "send it SIGUSR1 (kill -USR1 <pid>) for one now, or stop it first"
