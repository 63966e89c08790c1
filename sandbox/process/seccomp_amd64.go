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
	bpfRetK            = 0x06 // BPF_RET | BPF_K
)

// seccompFilter returns the classic BPF program (struct sock_filter array, native byte order)
// that bubblewrap installs with --seccomp: other architectures' and x32 system calls kill
// the process, deniedSyscalls return EPERM, everything else is allowed.
func seccompFilter() []byte {
	type insn struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	n := len(deniedSyscalls)
	// Layout: 0 load arch; 1 arch check; 2 load nr; 3 x32 check; 4..4+n-1 denied checks;
	// then allow, deny (EPERM), kill.
	allow := 4 + n
	deny, kill := allow+1, allow+2
	prog := []insn{
		{bpfLdWAbs, 0, 0, 4}, // seccomp_data.arch
		{bpfJeqK, 0, uint8(kill - 2), auditArchX8664},
		{bpfLdWAbs, 0, 0, 0}, // seccomp_data.nr
		{bpfJgeK, uint8(kill - 4), 0, x32SyscallBit},
	}
	for i, nr := range deniedSyscalls {
		pc := 4 + i
		prog = append(prog, insn{bpfJeqK, uint8(deny - pc - 1), 0, nr})
	}
	prog = append(prog,
		insn{bpfRetK, 0, 0, seccompRetAllow},
		insn{bpfRetK, 0, 0, seccompRetErrno | uint32(unix.EPERM)},
		insn{bpfRetK, 0, 0, seccompRetKillProc},
	)
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
