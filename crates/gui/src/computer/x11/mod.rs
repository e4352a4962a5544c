//! The X11 adapter of [`ComputerBackend`]: in-process over `x11rb` — `GetImage` of the root
//! window for captures, the XTEST extension for pointer and keyboard input, `QueryPointer` to
//! read the pointer back.
//!
//! The display comes from `DISPLAY` (or is given). The connection is opened on first use and
//! again after it breaks; every call runs on a blocking thread. Characters the keyboard map
//! cannot type (`é` on a US map) are typed through a spare keycode mapped for the moment,
//! as `xdotool` does.

mod keys;
mod pixels;

use async_trait::async_trait;
use kun_ports::{
    ComputerBackend, ComputerError, ComputerInput, Frame, MouseButton, Point, ScreenSize,
    ScrollDirection,
};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::xproto::{self, ConnectionExt as _, ImageFormat, Keycode, Keysym};
use x11rb::protocol::xtest::{self, ConnectionExt as _};
use x11rb::rust_connection::RustConnection;

/// A live connection and what was learnt about the screen and keyboard.
struct Desk {
    conn: RustConnection,
    root: xproto::Window,
    size: ScreenSize,
    pixels: pixels::Layout,
    keyboard: keys::Keyboard,
}

/// The desktop of an X11 display (see the module docs).
#[derive(Clone)]
pub struct X11Desktop {
    display: Option<String>,
    desk: Arc<Mutex<Option<Desk>>>,
}

impl std::fmt::Debug for X11Desktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X11Desktop")
            .field("display", &self.display)
            .finish_non_exhaustive()
    }
}

fn failed(err: impl std::fmt::Display) -> ComputerError {
    ComputerError::Failed(err.to_string())
}

impl X11Desktop {
    /// The desktop of `display` (`None`: the `DISPLAY` variable).
    #[must_use]
    pub fn new(display: Option<String>) -> Self {
        Self {
            display,
            desk: Arc::new(Mutex::new(None)),
        }
    }

    /// Connects now and says whether there is a usable desktop (for start-up diagnostics).
    ///
    /// # Errors
    /// [`ComputerError::Unavailable`] with the reason: no `DISPLAY`, a display that refuses
    /// the connection, no XTEST extension.
    pub fn probe(&self) -> Result<ScreenSize, ComputerError> {
        self.with_desk(|desk| Ok(desk.size))
    }

    fn connect(&self) -> Result<Desk, ComputerError> {
        let name = match &self.display {
            Some(name) => name.clone(),
            None => std::env::var("DISPLAY")
                .ok()
                .filter(|d| !d.is_empty())
                .ok_or_else(|| {
                    ComputerError::Unavailable(
                        "DISPLAY is not set, so there is no X11 desktop to use (start the tools \
                         inside a desktop session, or point DISPLAY at an X server)"
                            .to_owned(),
                    )
                })?,
        };
        let (conn, screen_num) = x11rb::connect(Some(&name)).map_err(|err| {
            ComputerError::Unavailable(format!("cannot connect to the X display {name}: {err}"))
        })?;
        let present = conn
            .extension_information(xtest::X11_EXTENSION_NAME)
            .map_err(failed)?
            .is_some();
        if !present {
            return Err(ComputerError::Unavailable(format!(
                "the X display {name} has no XTEST extension, which input needs"
            )));
        }
        let setup = conn.setup();
        let screen = setup.roots.get(screen_num).ok_or_else(|| {
            ComputerError::Unavailable(format!("the X display {name} has no screen {screen_num}"))
        })?;
        let size = ScreenSize {
            width: u32::from(screen.width_in_pixels),
            height: u32::from(screen.height_in_pixels),
        };
        let pixels = pixels::Layout::of(setup, screen)?;
        let root = screen.root;
        let keyboard = keys::Keyboard::load(&conn, setup.min_keycode, setup.max_keycode)?;
        Ok(Desk {
            conn,
            root,
            size,
            pixels,
            keyboard,
        })
    }

    /// Runs `work` with a connection, connecting first when needed; a broken connection is
    /// dropped so the next call reconnects.
    fn with_desk<T>(
        &self,
        work: impl FnOnce(&mut Desk) -> Result<T, ComputerError>,
    ) -> Result<T, ComputerError> {
        let mut slot = self.desk.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(self.connect()?);
        }
        let Some(desk) = slot.as_mut() else {
            return Err(failed("no connection"));
        };
        let result = work(desk);
        if matches!(result, Err(ComputerError::Failed(_))) {
            *slot = None;
        }
        result
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Desk) -> Result<T, ComputerError> + Send + 'static,
    ) -> Result<T, ComputerError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.with_desk(work))
            .await
            .map_err(|err| failed(format!("the X11 worker stopped: {err}")))?
    }
}

impl Desk {
    /// Waits until the server has processed every request sent so far.
    fn sync(&self) -> Result<(), ComputerError> {
        self.conn
            .get_input_focus()
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        Ok(())
    }

    fn check(&self, point: Point) -> Result<(i16, i16), ComputerError> {
        if !point.within(self.size) {
            return Err(ComputerError::Invalid(format!(
                "({}, {}) is off the {}×{} screen",
                point.x, point.y, self.size.width, self.size.height
            )));
        }
        let x = i16::try_from(point.x).map_err(failed)?;
        let y = i16::try_from(point.y).map_err(failed)?;
        Ok((x, y))
    }

    fn fake(&self, kind: u8, detail: u8, at: (i16, i16)) -> Result<(), ComputerError> {
        self.conn
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, self.root, at.0, at.1, 0)
            .map_err(failed)?;
        Ok(())
    }

    fn motion(&self, at: (i16, i16)) -> Result<(), ComputerError> {
        self.fake(xproto::MOTION_NOTIFY_EVENT, 0, at)
    }

    fn button(&self, button: u8) -> Result<(), ComputerError> {
        self.fake(xproto::BUTTON_PRESS_EVENT, button, (0, 0))?;
        self.fake(xproto::BUTTON_RELEASE_EVENT, button, (0, 0))
    }

    fn key(&self, keycode: Keycode, press: bool) -> Result<(), ComputerError> {
        let kind = if press {
            xproto::KEY_PRESS_EVENT
        } else {
            xproto::KEY_RELEASE_EVENT
        };
        self.fake(kind, keycode, (0, 0))
    }

    fn capture(&self) -> Result<Frame, ComputerError> {
        let width = u16::try_from(self.size.width).map_err(failed)?;
        let height = u16::try_from(self.size.height).map_err(failed)?;
        let image = self
            .conn
            .get_image(ImageFormat::Z_PIXMAP, self.root, 0, 0, width, height, !0)
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        let rgb = self.pixels.rgb_of(&image.data, self.size)?;
        Ok(Frame {
            size: self.size,
            rgb,
        })
    }

    fn pointer(&self) -> Result<Point, ComputerError> {
        let reply = self
            .conn
            .query_pointer(self.root)
            .map_err(failed)?
            .reply()
            .map_err(failed)?;
        let x = u32::try_from(reply.root_x.max(0)).unwrap_or(0);
        let y = u32::try_from(reply.root_y.max(0)).unwrap_or(0);
        Ok(Point::new(x, y))
    }

    /// Presses the keysyms of a chord in order and releases them in reverse.
    fn chord(&mut self, keysyms: &[Keysym]) -> Result<(), ComputerError> {
        let mut pressed = Vec::with_capacity(keysyms.len() + 1);
        for &keysym in keysyms {
            let stroke = self.keyboard.stroke(keysym)?;
            if stroke.shift && keysyms.len() == 1 {
                let shift = self.keyboard.stroke(keys::SHIFT_L)?;
                self.key(shift.keycode, true)?;
                pressed.push(shift.keycode);
            }
            self.key(stroke.keycode, true)?;
            pressed.push(stroke.keycode);
        }
        for keycode in pressed.into_iter().rev() {
            self.key(keycode, false)?;
        }
        self.sync()
    }

    fn type_text(&mut self, text: &str) -> Result<(), ComputerError> {
        let keysyms: Vec<Keysym> = text.chars().map(keys::keysym_of_char).collect();
        self.keyboard.prepare(&self.conn, &keysyms)?;
        let typed = keysyms.iter().try_for_each(|keysym| self.chord(&[*keysym]));
        let restored = self.keyboard.restore(&self.conn);
        typed.and(restored)?;
        self.sync()
    }

    fn perform(&mut self, input: &ComputerInput) -> Result<(), ComputerError> {
        match input {
            ComputerInput::Move { to } => {
                let at = self.check(*to)?;
                self.motion(at)?;
            }
            ComputerInput::Click { at, button, count } => {
                let at = self.check(*at)?;
                self.motion(at)?;
                for _ in 0..*count {
                    self.button(button_number(*button))?;
                }
            }
            ComputerInput::Drag { from, to } => {
                let start = self.check(*from)?;
                let end = self.check(*to)?;
                self.motion(start)?;
                self.fake(xproto::BUTTON_PRESS_EVENT, 1, (0, 0))?;
                self.sync()?;
                let middle = (
                    i16::try_from((i32::from(start.0) + i32::from(end.0)) / 2).map_err(failed)?,
                    i16::try_from((i32::from(start.1) + i32::from(end.1)) / 2).map_err(failed)?,
                );
                self.motion(middle)?;
                self.motion(end)?;
                self.sync()?;
                self.fake(xproto::BUTTON_RELEASE_EVENT, 1, (0, 0))?;
            }
            ComputerInput::Type { text } => self.type_text(text)?,
            ComputerInput::Key { chord } => {
                let keysyms = keys::parse_chord(chord).map_err(ComputerError::Invalid)?;
                self.keyboard.prepare(&self.conn, &keysyms)?;
                let pressed = self.chord(&keysyms);
                let restored = self.keyboard.restore(&self.conn);
                pressed.and(restored)?;
            }
            ComputerInput::Scroll {
                at,
                direction,
                amount,
            } => {
                let at = self.check(*at)?;
                self.motion(at)?;
                let button = match direction {
                    ScrollDirection::Up => 4,
                    ScrollDirection::Down => 5,
                    ScrollDirection::Left => 6,
                    ScrollDirection::Right => 7,
                };
                for _ in 0..*amount {
                    self.button(button)?;
                }
            }
        }
        self.sync()
    }
}

const fn button_number(button: MouseButton) -> u8 {
    match button {
        MouseButton::Left => 1,
        MouseButton::Middle => 2,
        MouseButton::Right => 3,
    }
}

#[async_trait]
impl ComputerBackend for X11Desktop {
    async fn screen(&self) -> Result<ScreenSize, ComputerError> {
        self.blocking(|desk| Ok(desk.size)).await
    }

    async fn capture(&self) -> Result<Frame, ComputerError> {
        self.blocking(|desk| desk.capture()).await
    }

    async fn perform(&self, input: &ComputerInput) -> Result<(), ComputerError> {
        let input = input.clone();
        let result = self.blocking(move |desk| desk.perform(&input)).await;
        // Let clients handle the events before the next capture reads the screen.
        tokio::time::sleep(Duration::from_millis(20)).await;
        result
    }

    async fn pointer(&self) -> Result<Point, ComputerError> {
        self.blocking(|desk| desk.pointer()).await
    }
}
