//! The operator side of the line protocol (bench/operators/protocol.mjs): one JSON object a
//! line on stdout, commands on stdin; and the Recorder, as the Go peer's.
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes one event line; the stdout lock keeps lines whole across threads.
pub fn send(event: Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{event}");
    let _ = out.flush();
}

pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

fn rusage() -> libc::rusage {
    // SAFETY: getrusage fills the struct it is given.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    }
}

pub fn cpu_us() -> i64 {
    let ru = rusage();
    // time_t and suseconds_t are i64 on 64-bit Linux only.
    #[allow(clippy::unnecessary_cast)]
    let us = |t: libc::timeval| t.tv_sec as i64 * 1_000_000 + t.tv_usec as i64;
    us(ru.ru_utime) + us(ru.ru_stime)
}

fn rss() -> i64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let resident: i64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    resident * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as i64
}

/// Memory as the other peers report it; heap: what glibc malloc has handed out (there is no GC).
pub fn memory() -> serde_json::Map<String, Value> {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let heap = unsafe {
        let mi = libc::mallinfo2();
        mi.uordblks + mi.hblkhd
    };
    let mut m = serde_json::Map::new();
    m.insert("heap".into(), json!(heap));
    m.insert("rss".into(), json!(rss()));
    m.insert("maxRss".into(), json!(rusage().ru_maxrss * 1024));
    m
}

#[derive(Default)]
struct State {
    reconciles: i64,
    in_flight: i64,
    latencies: Vec<i64>,
    last_seen: HashMap<String, String>,
    done: HashSet<String>,
    expect: usize,
    announced: bool,
}

/// Counts reconciles and the latency from the load generator's write to reconcile start.
#[derive(Default)]
pub struct Recorder(Mutex<State>);

impl State {
    fn check_all(&mut self) {
        if self.expect > 0 && !self.announced && self.done.len() >= self.expect {
            self.announced = true;
            send(json!({"ev": "all", "at": now_us(), "reconciles": self.reconciles}));
        }
    }
}

impl Recorder {
    pub fn start(&self, key: &str, written_at: Option<&str>, at: i64) {
        let mut s = self.0.lock().unwrap();
        s.in_flight += 1;
        if let Some(w) = written_at.filter(|w| !w.is_empty())
            && s.last_seen.get(key).map(String::as_str) != Some(w)
        {
            s.last_seen.insert(key.to_owned(), w.to_owned());
            if let Ok(t) = w.parse::<i64>() {
                s.latencies.push(at - t);
            }
        }
    }

    pub fn finish(&self, key: &str, ok: bool) {
        let mut s = self.0.lock().unwrap();
        s.in_flight -= 1;
        if !ok {
            return;
        }
        s.reconciles += 1;
        s.done.insert(key.to_owned());
        s.check_all();
    }

    /// expect / mark / stats; anything else is ignored.
    pub fn command(&self, cmd: &Value) {
        let mut s = self.0.lock().unwrap();
        match cmd["cmd"].as_str() {
            Some("expect") => {
                s.expect = cmd["n"].as_u64().unwrap_or(0) as usize;
                s.announced = false;
                s.check_all();
            }
            Some("mark") => {
                s.reconciles = 0;
                s.latencies.clear();
                s.done.clear();
                s.expect = 0;
                send(json!({"ev": "marked", "cpuUs": cpu_us(), "at": now_us()}));
            }
            Some("stats") => {
                let mut m = memory();
                m.insert("ev".into(), json!("stats"));
                m.insert("cpuUs".into(), json!(cpu_us()));
                m.insert("at".into(), json!(now_us()));
                m.insert("reconciles".into(), json!(s.reconciles));
                m.insert("inFlight".into(), json!(s.in_flight));
                if cmd["lite"] != json!(true) {
                    m.insert("latUs".into(), json!(s.latencies));
                }
                send(Value::Object(m));
            }
            _ => {}
        }
    }
}

pub fn fail(message: impl std::fmt::Display) -> ! {
    send(json!({"ev": "error", "message": message.to_string()}));
    std::process::exit(1)
}
