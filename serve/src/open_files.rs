//! The process's open-files limit: a server holding many connections (and
//! a benchmark opening as many) raises its soft limit to the hard one.

/// Raise this process's soft open-files limit to the hard one; the limit
/// now in force.
pub fn raise() -> u64 {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = limit.maximum;
    let _ = setrlimit(Resource::Nofile, limit);
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}
