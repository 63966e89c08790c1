package process

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside the sandbox: kernel interfaces an agent never needs
// and that are common privilege-escalation paths (keyrings, BPF, perf, io_uring,
// userfaultfd, module and mount APIs, namespaces, handle-based opens, ptrace and
// cross-process memory access, personality flags that turn off ASLR).
var deniedSyscalls = []uint32{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PERSONALITY, unix.SYS_SYSLOG, unix.SYS_ACCT, unix.SYS_VHANGUP,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOUNT_SETATTR,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME,
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_QUOTACTL, unix.SYS_LOOKUP_DCOOKIE,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
}

const (
	auditArchX8664     = 0xc000003e // AUDIT_ARCH_X86_64
	x32SyscallBit      = 0x40000000
	seccompRetAllow    = 0x7fff0000
	seccompRetErrno    = 0x00050000
	seccompRetKillProc = 0x80000000
	bpfLdWAbs          = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK            = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK            = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK           = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRetK            = 0x06 // BPF_RET | BPF_K
	seccompDataArch    = 4
	seccompDataArg0    = 16 // low 32 bits of args[0] (little endian)
)

// seccompFilter returns the classic BPF program (struct sock_filter array, native byte order)
// that bubblewrap installs with --seccomp: other architectures' and x32 system calls kill
// the process, deniedSyscalls return EPERM, everything else is allowed. With noFork the
// process also cannot make processes: fork, vfork and clone without CLONE_THREAD return
// EPERM, and clone3 returns ENOSYS (so that libc falls back to clone, where threads are
// still allowed).
func seccompFilter(noFork bool) []byte {
	// Jumps name their targets; they are resolved to relative offsets at the end.
	type insn struct {
		code   uint16
		jt, jf string // label or "" for the next instruction
		k      uint32
		label  string
	}
	prog := []insn{
		{code: bpfLdWAbs, k: seccompDataArch},
		{code: bpfJeqK, jf: "kill", k: auditArchX8664},
		{code: bpfLdWAbs, k: 0}, // seccomp_data.nr
		{code: bpfJgeK, jt: "kill", k: x32SyscallBit},
	}
	for _, nr := range deniedSyscalls {
		prog = append(prog, insn{code: bpfJeqK, jt: "deny", k: nr})
	}
	if noFork {
		prog = append(prog,
			insn{code: bpfJeqK, jt: "deny", k: unix.SYS_FORK},
			insn{code: bpfJeqK, jt: "deny", k: unix.SYS_VFORK},
			insn{code: bpfJeqK, jt: "enosys", k: unix.SYS_CLONE3},
			insn{code: bpfJeqK, jf: "allow", k: unix.SYS_CLONE},
			insn{code: bpfLdWAbs, k: seccompDataArg0},
			insn{code: bpfJsetK, jt: "allow", jf: "deny", k: unix.CLONE_THREAD},
		)
	}
	prog = append(prog,
		insn{code: bpfRetK, k: seccompRetAllow, label: "allow"},
		insn{code: bpfRetK, k: seccompRetErrno | uint32(unix.EPERM), label: "deny"},
		insn{code: bpfRetK, k: seccompRetKillProc, label: "kill"},
		insn{code: bpfRetK, k: seccompRetErrno | uint32(unix.ENOSYS), label: "enosys"},
	)
	at := map[string]int{}
	for pc, in := range prog {
		if in.label != "" {
			at[in.label] = pc
		}
	}
	offset := func(pc int, label string) uint8 {
		if label == "" {
			return 0
		}
		return uint8(at[label] - pc - 1)
	}
	out := make([]byte, 0, 8*len(prog))
	for pc, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, offset(pc, in.jt), offset(pc, in.jf))
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
