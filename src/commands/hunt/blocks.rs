//! A history file read a block of whole lines at a time, each block's
//! lines parsed on every core while the calling thread takes the block
//! before it: reading, parsing and what the reader does with the results
//! (pairing Jepsen's invocations, collecting transactions) overlap, and
//! the file is never held whole.
use std::io::Read;
use std::sync::mpsc::sync_channel;

/// Bytes read at a time (a block ends at its last newline; the rest waits
/// for the next one).
const BLOCK: usize = 8 << 20;

/// Reads `input` to its end: `parse` gets a run of a block's lines and the
/// number of the first (from 1), on a core of its own; `take` gets each
/// block's results in the file's order, on the calling thread, and says
/// whether to go on (false: stop reading). An I/O error, or a block that
/// is not UTF-8 where `utf8` asks for it, is `damage` at its line.
pub fn read<T: Send, E: Send>(
    input: &mut (impl Read + Send),
    utf8: bool,
    damage: impl Fn(usize, String) -> E + Sync,
    parse: impl Fn(&[&[u8]], usize) -> T + Sync,
    mut take: impl FnMut(T) -> Result<bool, E>,
) -> Result<(), E> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        // One block parsed ahead of the one being taken: two blocks in memory.
        let (tx, rx) = sync_channel::<Result<Vec<T>, E>>(1);
        let (parse, damage) = (&parse, &damage);
        s.spawn(move || {
            let mut buf: Vec<u8> = Vec::with_capacity(BLOCK + 4096);
            let mut chunk = vec![0u8; BLOCK];
            let mut line_no = 0usize;
            loop {
                let n = match read_some(input, &mut chunk) {
                    Ok(n) => n,
                    Err(e) => {
                        let _ = tx.send(Err(damage(line_no + 1, e.to_string())));
                        return;
                    }
                };
                buf.extend_from_slice(&chunk[..n]);
                let cut = if n == 0 {
                    buf.len()
                } else {
                    match buf.iter().rposition(|b| *b == b'\n') {
                        Some(i) => i + 1,
                        None => continue,
                    }
                };
                let block: Vec<u8> = buf.drain(..cut).collect();
                if block.is_empty() {
                    // The end, right after a newline.
                    return;
                }
                if utf8 && let Err(e) = std::str::from_utf8(&block) {
                    let line = line_no + 1 + block[..e.valid_up_to()].iter().filter(|b| **b == b'\n').count();
                    let _ = tx.send(Err(damage(line, "not UTF-8".into())));
                    return;
                }
                let mut lines: Vec<&[u8]> = block.split(|b| *b == b'\n').collect();
                if block.last() == Some(&b'\n') {
                    lines.pop();
                }
                let first = line_no + 1;
                line_no += lines.len();
                let part = lines.len().div_ceil(threads).max(1);
                let parsed: Vec<T> = std::thread::scope(|scope| {
                    let handles: Vec<_> = (0..lines.len())
                        .step_by(part)
                        .map(|start| {
                            let slice = &lines[start..(start + part).min(lines.len())];
                            scope.spawn(move || parse(slice, first + start))
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("a parser thread"))
                        .collect()
                });
                // The taker stopped (damage, or not this format): nothing more to read.
                if tx.send(Ok(parsed)).is_err() || n == 0 {
                    return;
                }
            }
        });
        for block in rx {
            for part in block? {
                if !take(part)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    })
}

fn read_some(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match input.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line, numbered from 1, in order, across blocks, whatever the
    /// last line ends with.
    #[test]
    fn lines_come_back_numbered_and_in_order() {
        for tail in ["", "\n"] {
            // More than one block, lines of several lengths.
            let text: String = (1..=400_000)
                .map(|i| format!("{i} {}", "x".repeat(i % 50)))
                .collect::<Vec<_>>()
                .join("\n")
                + tail;
            let mut got: Vec<(usize, String)> = Vec::new();
            read(
                &mut text.as_bytes(),
                true,
                |line, what| (line, what),
                |lines, first| {
                    (lines.iter().enumerate())
                        .map(|(i, l)| (first + i, String::from_utf8(l.to_vec()).unwrap()))
                        .collect::<Vec<_>>()
                },
                |part| {
                    got.extend(part);
                    Ok(true)
                },
            )
            .unwrap();
            assert_eq!(got.len(), 400_000, "tail {tail:?}");
            for (i, (n, l)) in got.iter().enumerate() {
                assert_eq!(*n, i + 1);
                assert!(l.starts_with(&format!("{n} ")), "line {n}: {l}");
            }
        }
    }

    #[test]
    fn the_taker_stops_the_reading_and_damage_names_its_line() {
        let text = "a\nb\nc\n".repeat(1_000_000);
        let mut parts = 0;
        read(
            &mut text.as_bytes(),
            true,
            |line, what| (line, what),
            |lines, _| lines.len(),
            |_| {
                parts += 1;
                Ok(false)
            },
        )
        .unwrap();
        assert_eq!(parts, 1);
        let bad = b"ok\nok\n\xff\n".to_vec();
        let e = read(
            &mut bad.as_slice(),
            true,
            |line, what| (line, what),
            |_, _| (),
            |_| Ok(true),
        )
        .unwrap_err();
        assert_eq!((e.0, e.1.as_str()), (3, "not UTF-8"));
    }
}
