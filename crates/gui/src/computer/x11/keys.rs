//! Key names, characters and keycodes.
//!
//! A chord is key names joined by `+` (`ctrl+shift+t`, `Return`, `alt+F4`); names are matched
//! without case. A character's keysym is its Latin-1 code, or `0x0100_0000 + code point`
//! (X11's Unicode keysyms).

use super::failed;
use kun_ports::ComputerError;
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{ConnectionExt as _, Keycode, Keysym};
use x11rb::rust_connection::RustConnection;

/// `Shift_L`.
pub(super) const SHIFT_L: Keysym = 0xffe1;

/// Named keys (lower-case names) and their keysyms.
const NAMED: &[(&str, Keysym)] = &[
    ("ctrl", 0xffe3),
    ("control", 0xffe3),
    ("shift", SHIFT_L),
    ("alt", 0xffe9),
    ("super", 0xffeb),
    ("meta", 0xffeb),
    ("cmd", 0xffeb),
    ("win", 0xffeb),
    ("return", 0xff0d),
    ("enter", 0xff0d),
    ("tab", 0xff09),
    ("escape", 0xff1b),
    ("esc", 0xff1b),
    ("backspace", 0xff08),
    ("delete", 0xffff),
    ("del", 0xffff),
    ("insert", 0xff63),
    ("home", 0xff50),
    ("end", 0xff57),
    ("left", 0xff51),
    ("up", 0xff52),
    ("right", 0xff53),
    ("down", 0xff54),
    ("page_up", 0xff55),
    ("pageup", 0xff55),
    ("prior", 0xff55),
    ("page_down", 0xff56),
    ("pagedown", 0xff56),
    ("next", 0xff56),
    ("space", 0x20),
    ("plus", 0x2b),
    ("minus", 0x2d),
    ("menu", 0xff67),
    ("print", 0xff61),
    ("f1", 0xffbe),
    ("f2", 0xffbf),
    ("f3", 0xffc0),
    ("f4", 0xffc1),
    ("f5", 0xffc2),
    ("f6", 0xffc3),
    ("f7", 0xffc4),
    ("f8", 0xffc5),
    ("f9", 0xffc6),
    ("f10", 0xffc7),
    ("f11", 0xffc8),
    ("f12", 0xffc9),
];

/// The keysym that types `c`.
pub(super) fn keysym_of_char(c: char) -> Keysym {
    match c {
        '\n' | '\r' => 0xff0d,
        '\t' => 0xff09,
        ' '..='~' | '\u{a0}'..='\u{ff}' => u32::from(c),
        other => 0x0100_0000 + u32::from(other),
    }
}

/// The keysyms of a chord.
///
/// # Errors
/// An empty part or an unknown key name.
pub(super) fn parse_chord(chord: &str) -> Result<Vec<Keysym>, String> {
    let mut keysyms = Vec::new();
    for part in chord.split('+') {
        let name = part.trim();
        let lower = name.to_lowercase();
        let keysym = if let Some((_, keysym)) = NAMED.iter().find(|(n, _)| *n == lower) {
            *keysym
        } else {
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                // A letter names its key: `ctrl+S` is ctrl and the s key.
                (Some(c), None) => keysym_of_char(c.to_lowercase().next().unwrap_or(c)),
                _ => {
                    return Err(format!(
                        "`{name}` in `{chord}` is not a key name; use names such as ctrl, \
                         shift, alt, super, Return, Tab, Escape, BackSpace, Delete, Home, End, \
                         Left, Up, Right, Down, Page_Up, Page_Down, space, F1–F12, or one \
                         character"
                    ));
                }
            }
        };
        keysyms.push(keysym);
    }
    if keysyms.is_empty() {
        return Err("the chord is empty".to_owned());
    }
    Ok(keysyms)
}

/// How to type one keysym: a keycode, and whether Shift must be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stroke {
    pub keycode: Keycode,
    pub shift: bool,
}

/// The server's keyboard map, and a spare keycode borrowed for keysyms it lacks.
pub(super) struct Keyboard {
    min: Keycode,
    per: usize,
    keysyms: Vec<Keysym>,
    /// Keycodes remapped for the moment, and their original keysyms.
    borrowed: Vec<(Keycode, Vec<Keysym>)>,
}

impl Keyboard {
    /// Reads the keyboard map.
    pub(super) fn load(
        conn: &RustConnection,
        min: Keycode,
        max: Keycode,
    ) -> Result<Self, ComputerError> {
        let count = max.saturating_sub(min).saturating_add(1);
        let reply = conn
            .get_keyboard_mapping(min, count)
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        Ok(Self {
            min,
            per: usize::from(reply.keysyms_per_keycode.max(1)),
            keysyms: reply.keysyms,
            borrowed: Vec::new(),
        })
    }

    fn keycode_at(&self, index: usize) -> Option<Keycode> {
        u8::try_from(index / self.per)
            .ok()
            .and_then(|offset| self.min.checked_add(offset))
    }

    fn find(&self, keysym: Keysym) -> Option<Stroke> {
        for level in 0..2.min(self.per) {
            let found = self
                .keysyms
                .iter()
                .enumerate()
                .find(|(i, k)| i % self.per == level && **k == keysym);
            if let Some((index, _)) = found {
                return self.keycode_at(index).map(|keycode| Stroke {
                    keycode,
                    shift: level == 1,
                });
            }
        }
        None
    }

    /// How to type `keysym` (after [`Keyboard::prepare`] for keysyms the map lacks).
    pub(super) fn stroke(&self, keysym: Keysym) -> Result<Stroke, ComputerError> {
        self.find(keysym).ok_or_else(|| {
            ComputerError::Invalid(format!("this keyboard has no key for keysym {keysym:#x}"))
        })
    }

    /// Maps every keysym of `keysyms` the map lacks onto a spare keycode (one change per
    /// keycode, then one pause so clients re-read the map before the keys arrive).
    pub(super) fn prepare(
        &mut self,
        conn: &RustConnection,
        keysyms: &[Keysym],
    ) -> Result<(), ComputerError> {
        let mut missing: Vec<Keysym> = keysyms
            .iter()
            .copied()
            .filter(|k| self.find(*k).is_none())
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            return Ok(());
        }
        if let Some(named) = missing
            .iter()
            .find(|k| **k & 0xff00_0000 == 0 && **k >= 0xff00)
        {
            return Err(ComputerError::Invalid(format!(
                "this keyboard has no key for keysym {named:#x}"
            )));
        }
        let spares = self.spares();
        if spares.len() < missing.len() {
            return Err(ComputerError::Invalid(format!(
                "the keyboard map has {} spare keys, and this text needs {} characters it \
                 cannot type; type it in smaller parts",
                spares.len(),
                missing.len()
            )));
        }
        for (keysym, keycode) in missing.into_iter().zip(spares) {
            let start = usize::from(keycode - self.min) * self.per;
            let original = self.keysyms[start..start + self.per].to_vec();
            self.borrowed.push((keycode, original));
            let mapping = vec![keysym; self.per];
            self.remap(conn, keycode, &mapping)?;
        }
        // Clients re-read the map when told it changed; give them a moment.
        std::thread::sleep(std::time::Duration::from_millis(150));
        Ok(())
    }

    /// Keycodes with no keysyms, highest first.
    fn spares(&self) -> Vec<Keycode> {
        self.keysyms
            .chunks(self.per)
            .enumerate()
            .rev()
            .filter(|(_, syms)| syms.iter().all(|k| *k == 0))
            .filter_map(|(i, _)| self.keycode_at(i * self.per))
            .collect()
    }

    fn remap(
        &mut self,
        conn: &RustConnection,
        keycode: Keycode,
        mapping: &[Keysym],
    ) -> Result<(), ComputerError> {
        let per = u8::try_from(self.per).map_err(failed)?;
        conn.change_keyboard_mapping(1, keycode, per, mapping)
            .map_err(failed)?;
        conn.flush().map_err(failed)?;
        conn.get_input_focus()
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        let start = usize::from(keycode - self.min) * self.per;
        self.keysyms[start..start + self.per].copy_from_slice(mapping);
        Ok(())
    }

    /// Gives borrowed keycodes their keysyms back.
    pub(super) fn restore(&mut self, conn: &RustConnection) -> Result<(), ComputerError> {
        if self.borrowed.is_empty() {
            return Ok(());
        }
        // Let clients handle the typed keys with the borrowed map first.
        std::thread::sleep(std::time::Duration::from_millis(50));
        for (keycode, original) in std::mem::take(&mut self.borrowed) {
            self.remap(conn, keycode, &original)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse_names_and_characters() {
        assert_eq!(parse_chord("ctrl+s").unwrap(), [0xffe3, 0x73]);
        assert_eq!(
            parse_chord("Ctrl+Shift+T").unwrap(),
            [0xffe3, SHIFT_L, 0x74]
        );
        assert_eq!(parse_chord("Return").unwrap(), [0xff0d]);
        assert_eq!(parse_chord("alt+F4").unwrap(), [0xffe9, 0xffc1]);
        assert!(parse_chord("ctrl+NoSuchKey").is_err());
        assert!(parse_chord("").is_err());
        assert!(parse_chord("ctrl+").is_err());
    }

    #[test]
    fn characters_map_to_keysyms() {
        assert_eq!(keysym_of_char('a'), 0x61);
        assert_eq!(keysym_of_char('é'), 0xe9);
        assert_eq!(keysym_of_char('\n'), 0xff0d);
        assert_eq!(keysym_of_char('€'), 0x0100_20ac);
    }

    #[test]
    fn strokes_come_from_the_map() {
        // Keycodes 8 and 9, two keysyms each: a/A and 1/!.
        let keyboard = Keyboard {
            min: 8,
            per: 2,
            keysyms: vec![0x61, 0x41, 0x31, 0x21],
            borrowed: Vec::new(),
        };
        assert_eq!(
            keyboard.find(0x41),
            Some(Stroke {
                keycode: 8,
                shift: true
            })
        );
        assert_eq!(
            keyboard.find(0x31),
            Some(Stroke {
                keycode: 9,
                shift: false
            })
        );
        assert_eq!(keyboard.find(0xe9), None);
        assert!(keyboard.spares().is_empty());
    }
}
