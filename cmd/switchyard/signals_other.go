//go:build !unix

package main

import "os"

// notifyReload does nothing: this system (Windows) has no SIGHUP, so serve reads its
// configuration files again only when restarted.
func notifyReload(c chan<- os.Signal) {}

// notifyBackup does nothing: this system (Windows) has no SIGUSR1, so serve's backups
// follow --backup-every only.
func notifyBackup(c chan<- os.Signal) {}

// signalsUsage is the signals section of serve -h. Go delivers Ctrl+C and Ctrl+Break as
// os.Interrupt, and closing the console, logging off or shutting down as SIGTERM.
const signalsUsage = "  Ctrl+C, Ctrl+Break      shut down (--shutdown-delay, then --shutdown-timeout for requests in flight);\n" +
	"                          so does closing the console window\n" +
	"  (no SIGHUP or SIGUSR1 on this system: restart serve to read --litellm-config, --providers-config,\n" +
	"  --model-groups and --tls-cert/--tls-key again; backups follow --backup-every)"

// backupNowHint tells switchyard backup's user how to get a running server's backup.
const backupNowHint = "stop it first (this system has no SIGUSR1 to ask it for one now; its --backup-every backups are there)"
