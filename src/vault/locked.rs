//! [`SecretBytes`]: a secret's value in memory of its own, which is kept out of swap (mlock),
//! out of core dumps (MADV_DONTDUMP), out of forked children (MADV_WIPEONFORK: a pane's spawn
//! forks paddock before it execs), and wiped when dropped.
//!
//! Each value gets its own anonymous mapping, a page or more. Locking is best effort: past the
//! user's RLIMIT_MEMLOCK (8 MiB by default, a few hundred values) a value is kept unlocked, and
//! still excluded from dumps. On Windows a value is plain heap memory, wiped when dropped.

use std::fmt;
use std::ops::Deref;

/// A secret's value, in locked, dump-excluded memory wiped when dropped.
pub struct SecretBytes {
    pages: Pages,
    len: usize,
}

impl SecretBytes {
    /// A copy of `bytes` in memory of its own.
    pub fn new(bytes: &[u8]) -> SecretBytes {
        let mut pages = Pages::new(bytes.len());
        pages.as_mut()[..bytes.len()].copy_from_slice(bytes);
        SecretBytes { pages, len: bytes.len() }
    }

    /// Take `bytes` in, wiping the original.
    pub fn from_vec(mut bytes: Vec<u8>) -> SecretBytes {
        let secret = SecretBytes::new(&bytes);
        zeroize::Zeroize::zeroize(&mut bytes);
        secret
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.pages.as_ref()[..self.len]
    }
}

impl Deref for SecretBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Clone for SecretBytes {
    fn clone(&self) -> SecretBytes {
        SecretBytes::new(self.as_slice())
    }
}

impl PartialEq for SecretBytes {
    fn eq(&self, other: &SecretBytes) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SecretBytes {}

impl fmt::Debug for SecretBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretBytes({} bytes)", self.len)
    }
}

#[cfg(unix)]
struct Pages {
    ptr: *mut u8,
    size: usize,
    locked: bool,
}

// SAFETY: the mapping is owned by this value alone; nothing else holds the pointer.
#[cfg(unix)]
unsafe impl Send for Pages {}
// SAFETY: shared access only reads.
#[cfg(unix)]
unsafe impl Sync for Pages {}

#[cfg(unix)]
impl Pages {
    fn new(len: usize) -> Pages {
        // SAFETY: sysconf(3) cannot fail for _SC_PAGESIZE.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let size = len.max(1).div_ceil(page) * page;
        // SAFETY: a fresh private anonymous mapping of `size` bytes.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            // Out of address space: nothing sensible is left to do.
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(size, page)
                    .unwrap_or(std::alloc::Layout::new::<u8>()),
            );
        }
        // SAFETY: advice and locking on the mapping just made; each may fail without harm.
        let locked = unsafe {
            #[cfg(target_os = "linux")]
            {
                libc::madvise(ptr, size, libc::MADV_DONTDUMP);
                libc::madvise(ptr, size, libc::MADV_WIPEONFORK);
            }
            libc::mlock(ptr, size) == 0
        };
        Pages { ptr: ptr.cast(), size, locked }
    }

    fn as_ref(&self) -> &[u8] {
        // SAFETY: `size` bytes mapped readable for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.size) }
    }

    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: `size` bytes mapped writable, owned by `self` alone.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size) }
    }
}

#[cfg(unix)]
impl Drop for Pages {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(self.as_mut());
        // SAFETY: the mapping made in `new`, unlocked and unmapped once.
        unsafe {
            if self.locked {
                libc::munlock(self.ptr.cast(), self.size);
            }
            libc::munmap(self.ptr.cast(), self.size);
        }
    }
}

#[cfg(not(unix))]
struct Pages(zeroize::Zeroizing<Vec<u8>>);

#[cfg(not(unix))]
impl Pages {
    fn new(len: usize) -> Pages {
        Pages(zeroize::Zeroizing::new(vec![0; len]))
    }

    fn as_ref(&self) -> &[u8] {
        &self.0
    }

    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_back_and_clones_apart() {
        let value = SecretBytes::new(b"sk-test-1234");
        assert_eq!(&*value, b"sk-test-1234");
        let copy = value.clone();
        assert_eq!(copy, value);
        assert_ne!(copy.as_slice().as_ptr(), value.as_slice().as_ptr());
        drop(value);
        assert_eq!(copy.as_slice(), b"sk-test-1234");
        assert!(SecretBytes::new(b"").is_empty());
        assert_eq!(format!("{copy:?}"), "SecretBytes(12 bytes)");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_value_is_locked_and_left_out_of_dumps() {
        let value = SecretBytes::new(b"locked-value-5678");
        let address = value.as_slice().as_ptr() as usize;
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        // The mapping's own block: its header line is its address range; its VmFlags follow.
        let mut lines = smaps.lines().skip_while(|line| {
            let mut range = line.split_whitespace().next().unwrap_or_default().split('-');
            let start = range.next().and_then(|s| usize::from_str_radix(s, 16).ok());
            let end = range.next().and_then(|s| usize::from_str_radix(s, 16).ok());
            !matches!((start, end), (Some(s), Some(e)) if s <= address && address < e)
        });
        assert!(lines.next().is_some(), "no mapping holds the value");
        let flags = lines.find(|l| l.starts_with("VmFlags")).expect("VmFlags");
        assert!(flags.contains(" dd"), "not excluded from dumps: {flags}");
        assert!(flags.contains(" wf"), "not wiped on fork: {flags}");
        assert!(value.pages.locked && flags.contains(" lo"), "not locked: {flags}");
    }
}
