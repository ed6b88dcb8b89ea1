// The seccomp filter --sandbox installs (bwrap --seccomp FD): code may not create Unix-domain
// sockets, so it cannot connect to the host's services through socket files (docker.sock,
// dbus, anything under /run or in a home folder), whatever path they have; a new network
// namespace does not hide those. socketpair() (pipes between a process and its children) still
// works. io_uring is refused too, since it can open sockets without the socket() system call.
// A classic BPF program, built here so nothing needs compiling: x86-64 and arm64 only.

const AF_UNIX = 1;
const EACCES = 13;

interface Arch {
  audit: number;
  socket: number;
  ioUringSetup: number;
}

const ARCHES: Record<string, Arch> = {
  x64: { audit: 0xc000003e, socket: 41, ioUringSetup: 425 },
  arm64: { audit: 0xc00000b7, socket: 198, ioUringSetup: 425 },
};

// BPF opcodes
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
// seccomp return values
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;
// offsets in struct seccomp_data
const NR = 0;
const ARCH = 4;
const ARG0 = 16; // low 32 bits (little-endian)

/** The filter for this machine's architecture, or undefined where it is not built. */
export function unixSocketFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const deny = RET_ERRNO | EACCES;
  const program: Array<[number, number, number, number]> = [
    /* 0 */ [LD_W_ABS, 0, 0, ARCH],
    /* 1 */ [JEQ_K, 0, 8, a.audit], // another ABI (32-bit calls): kill
    /* 2 */ [LD_W_ABS, 0, 0, NR],
    /* 3 */ [JGE_K, 5, 0, 0x40000000], // x32 system calls: deny
    /* 4 */ [JEQ_K, 4, 0, a.ioUringSetup],
    /* 5 */ [JEQ_K, 0, 2, a.socket],
    /* 6 */ [LD_W_ABS, 0, 0, ARG0],
    /* 7 */ [JEQ_K, 1, 0, AF_UNIX],
    /* 8 */ [RET_K, 0, 0, RET_ALLOW],
    /* 9 */ [RET_K, 0, 0, deny],
    /* 10 */ [RET_K, 0, 0, RET_KILL_PROCESS],
  ];
  const buf = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
