//! `computer_use`: the tool ([`ComputerUse`]), screenshot scaling ([`Scale`]) and the X11
//! adapter of [`ComputerBackend`](kun_ports::ComputerBackend) ([`X11Desktop`]).

mod screenshot;
mod tool;
mod x11;

pub use screenshot::{MAX_SCREENSHOT_WIDTH, Scale, encode_png};
pub use tool::{
    Action, ComputerUse, ComputerUseArgs, ComputerUseMode, ComputerUseOutput,
    DEFAULT_ACTIONS_PER_TURN, ScreenshotInfo,
};
pub use x11::X11Desktop;
