//! The few system calls the switch needs, wrapped once. Every `unsafe` block in the crate
//! is here, each with the reason it is sound.
//!
//! - An AF_PACKET socket per port (packet(7)): raw Ethernet frames of one interface, with
//!   the kernel's receive timestamp (SO_TIMESTAMPNS, socket(7)), promiscuous membership,
//!   PACKET_IGNORE_OUTGOING (Linux >= 4.20) so the switch does not read back its own frames,
//!   and PACKET_STATISTICS (received / dropped for lack of buffer; reading resets them).
//! - ppoll with a nanosecond timeout, and a timer slack of 1 ns (prctl(2)) so the kernel
//!   does not round the shaper's wake-ups up by the default 50 us.
//! - CLOCK_REALTIME: the clock of SO_TIMESTAMPNS, so sojourn = now - receive timestamp.
//! - Signal flags for SIGTERM/SIGINT (stop), SIGUSR1/SIGUSR2 (start/end the window).

use ecnlab_core::Nanos;
use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

// Constants of linux/if_packet.h and asm-generic/socket.h, spelled out so that the crate
// does not depend on which of them a given libc release re-exports.
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_MR_PROMISC: libc::c_ushort = 1;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
/// SO_TIMESTAMPNS_OLD: struct timespec with native time_t (64-bit on 64-bit targets).
const SO_TIMESTAMPNS: libc::c_int = 35;
const ETH_P_ALL: u16 = 0x0003;
/// sll_pkttype of a frame this host sent (packet(7)).
const PACKET_OUTGOING: u8 = 4;

#[repr(C)]
struct PacketMreq {
    mr_ifindex: libc::c_int,
    mr_type: libc::c_ushort,
    mr_alen: libc::c_ushort,
    mr_address: [u8; 8],
}

#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    tp_packets: libc::c_uint,
    tp_drops: libc::c_uint,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, val: &T) -> io::Result<()> {
    // SAFETY: `val` points to a live T of the size we pass; the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(fd, level, name, val as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    };
    cvt(r).map(|_| ())
}

/// One received frame.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    /// Bytes copied into the buffer.
    pub len: usize,
    /// The frame's real length (larger than `len` if it did not fit).
    pub orig_len: usize,
    /// Kernel receive timestamp (CLOCK_REALTIME ns), if the kernel attached one.
    pub ts_ns: Option<Nanos>,
}

/// An AF_PACKET socket bound to one interface.
pub struct PacketSocket {
    fd: RawFd,
    pub ifindex: i32,
}

impl PacketSocket {
    /// Open, configure and bind a non-blocking packet socket on `ifname`.
    pub fn open(ifname: &str, rcvbuf: usize, sndbuf: usize) -> io::Result<PacketSocket> {
        let name = CString::new(ifname).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))?;
        // SAFETY: `name` is a valid NUL-terminated string for the duration of the call.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no interface named `{ifname}`")));
        }
        // SAFETY: plain system call; the returned descriptor is owned by the PacketSocket
        // below and closed in its Drop.
        let fd = cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                ETH_P_ALL.to_be() as libc::c_int,
            )
        })?;
        let s = PacketSocket { fd, ifindex };
        let one: libc::c_int = 1;
        setsockopt(fd, libc::SOL_SOCKET, SO_TIMESTAMPNS, &one)?;
        // Not fatal on kernels older than 4.20: outgoing frames are then skipped by type.
        let _ = setsockopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &one);
        // The *FORCE variants (CAP_NET_ADMIN) ignore net.core.rmem_max/wmem_max.
        let rb = rcvbuf.min(i32::MAX as usize) as libc::c_int;
        if setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &rb).is_err() {
            setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &rb)?;
        }
        let sb = sndbuf.min(i32::MAX as usize) as libc::c_int;
        if setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &sb).is_err() {
            setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &sb)?;
        }
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value to start from.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll and we pass its exact size.
        cvt(unsafe {
            libc::bind(
                fd,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        })?;
        let mreq = PacketMreq { mr_ifindex: ifindex, mr_type: PACKET_MR_PROMISC, mr_alen: 0, mr_address: [0; 8] };
        setsockopt(fd, libc::SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)?;
        // Frames that arrived between socket() and bind() belong to any interface: flush.
        let mut scratch = [0u8; 64];
        while let Ok(Some(_)) = s.recv(&mut scratch) {}
        s.stats()?; // and reset the kernel's counters
        Ok(s)
    }

    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// Receive one frame into `buf` without blocking; `Ok(None)` when there is none.
    /// Frames the kernel reports as our own outgoing ones are skipped.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        loop {
            // The control buffer holds one timespec cmsg with room to spare; u64 alignment
            // satisfies cmsghdr's.
            let mut control = [0u64; 16];
            // SAFETY: zeroed sockaddr_ll and msghdr are valid; every pointer stored in
            // `msg` points into locals that outlive the recvmsg call.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = &mut from as *mut libc::sockaddr_ll as *mut libc::c_void;
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            // MSG_TRUNC on a packet socket returns the frame's real length even when it did
            // not fit (packet(7)).
            // SAFETY: `msg` describes valid, writable memory of the stated sizes.
            let n = unsafe { libc::recvmsg(self.fd, &mut msg, libc::MSG_DONTWAIT | libc::MSG_TRUNC) };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock => Ok(None),
                    io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            if from.sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            let mut ts_ns = None;
            // SAFETY: the kernel filled `control` and set msg_controllen; the CMSG macros
            // walk within that length, and we read the timespec unaligned.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPNS {
                        let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                        ts_ns = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
            let orig_len = n as usize;
            return Ok(Some(Received { len: orig_len.min(buf.len()), orig_len, ts_ns }));
        }
    }

    /// Send one frame. `Ok(false)` if the socket's buffer is full (the frame is lost).
    pub fn send(&self, frame: &[u8]) -> io::Result<bool> {
        loop {
            // SAFETY: `frame` is valid for reads of its length; the socket is bound, so no
            // destination address is needed.
            let n =
                unsafe { libc::send(self.fd, frame.as_ptr() as *const libc::c_void, frame.len(), libc::MSG_DONTWAIT) };
            if n >= 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Ok(false),
                _ if e.raw_os_error() == Some(libc::ENOBUFS) => return Ok(false),
                _ => return Err(e),
            }
        }
    }

    /// (frames received, frames dropped) since the last call: PACKET_STATISTICS resets the
    /// kernel's counters when read.
    pub fn stats(&self) -> io::Result<(u64, u64)> {
        let mut st = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: `st` is writable for `len` bytes and the kernel writes at most `len`.
        cvt(unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                &mut st as *mut TpacketStats as *mut libc::c_void,
                &mut len,
            )
        })?;
        // tp_packets counts every frame the socket saw, including the dropped ones.
        Ok((st.tp_packets as u64, st.tp_drops as u64))
    }
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor and close it exactly once.
        unsafe {
            libc::close(self.fd);
        }
    }
}

/// CLOCK_REALTIME in ns (the clock of SO_TIMESTAMPNS).
pub fn realtime_ns() -> Nanos {
    // SAFETY: clock_gettime writes one timespec into a valid local.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe {
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Timer slack of this thread: 1 ns instead of the default 50 us.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// Switch this thread to SCHED_FIFO at `priority`.
pub fn set_realtime(priority: u8) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority as libc::c_int };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) }).map(|_| ())
}

/// Wait for input on `fds` for at most `timeout_ns` (None = until a signal).
pub fn ppoll(fds: &mut [libc::pollfd], timeout_ns: Option<u64>) -> io::Result<usize> {
    let ts = timeout_ns.map(|t| libc::timespec { tv_sec: (t / 1_000_000_000) as _, tv_nsec: (t % 1_000_000_000) as _ });
    let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is a valid slice of pollfd and `tp` is null or points to a live timespec.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, tp, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

pub static STOP: AtomicBool = AtomicBool::new(false);
pub static WINDOW_START: AtomicBool = AtomicBool::new(false);
pub static WINDOW_END: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work here: set a flag, the event loop does the rest.
    match sig {
        libc::SIGUSR1 => WINDOW_START.store(true, Ordering::SeqCst),
        libc::SIGUSR2 => WINDOW_END.store(true, Ordering::SeqCst),
        _ => STOP.store(true, Ordering::SeqCst),
    }
}

/// SIGTERM/SIGINT/SIGHUP stop the loop; SIGUSR1/SIGUSR2 start/end the measurement window.
/// Installed without SA_RESTART so that ppoll returns at once.
pub fn install_signal_handlers() -> io::Result<()> {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGUSR1, libc::SIGUSR2] {
        // SAFETY: a zeroed sigaction is valid; we set a handler that only touches atomics.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = 0;
        unsafe {
            libc::sigemptyset(&mut sa.sa_mask);
        }
        cvt(unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) })?;
    }
    Ok(())
}
