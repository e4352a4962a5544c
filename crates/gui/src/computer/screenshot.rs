//! Screenshots for the model: scaled to at most [`MAX_SCREENSHOT_WIDTH`] pixels wide, as PNG,
//! and the mapping of screenshot coordinates back to screen pixels.

use image::ImageEncoder as _;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use kun_ports::{Frame, Point, ScreenSize};

/// The widest screenshot the model receives.
pub const MAX_SCREENSHOT_WIDTH: u32 = 1280;

/// The scale between the screen and the screenshots the model sees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// The screen.
    pub screen: ScreenSize,
    /// The screenshot.
    pub shot: ScreenSize,
}

impl Scale {
    /// The screenshot size for `screen`: the same, or `max_width` wide with the aspect kept.
    ///
    /// ```
    /// use kun_gui::computer::Scale;
    /// use kun_ports::{Point, ScreenSize};
    /// let scale = Scale::for_screen(ScreenSize { width: 2560, height: 1440 }, 1280);
    /// assert_eq!(scale.shot, ScreenSize { width: 1280, height: 720 });
    /// assert_eq!(scale.factor(), 0.5);
    /// assert_eq!(scale.to_screen(Point::new(640, 360)).unwrap(), Point::new(1281, 721));
    /// assert!(scale.to_screen(Point::new(1280, 0)).is_err());
    /// ```
    #[must_use]
    pub fn for_screen(screen: ScreenSize, max_width: u32) -> Self {
        let shot = if screen.width > max_width && screen.width > 0 {
            let height = (u64::from(screen.height) * u64::from(max_width)
                + u64::from(screen.width) / 2)
                / u64::from(screen.width);
            ScreenSize {
                width: max_width,
                height: u32::try_from(height.max(1)).unwrap_or(u32::MAX),
            }
        } else {
            screen
        };
        Self { screen, shot }
    }

    /// Screenshot pixels per screen pixel (1.0 when not scaled).
    #[must_use]
    pub fn factor(&self) -> f64 {
        if self.screen.width == 0 {
            1.0
        } else {
            f64::from(self.shot.width) / f64::from(self.screen.width)
        }
    }

    /// The screen pixel at the centre of screenshot pixel `point`.
    ///
    /// # Errors
    /// When the point is off the screenshot.
    pub fn to_screen(&self, point: Point) -> Result<Point, String> {
        if !point.within(self.shot) {
            return Err(format!(
                "({}, {}) is off the screenshot, which is {}×{}: x must be below {} and y below {}",
                point.x,
                point.y,
                self.shot.width,
                self.shot.height,
                self.shot.width,
                self.shot.height
            ));
        }
        let map = |v: u32, shot: u32, screen: u32| -> u32 {
            let mapped = ((f64::from(v) + 0.5) * f64::from(screen) / f64::from(shot)).floor();
            // Truncation is safe: the value is within 0..screen.
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "bounded by the screen size"
            )]
            let mapped = mapped as u32;
            mapped.min(screen.saturating_sub(1))
        };
        Ok(Point::new(
            map(point.x, self.shot.width, self.screen.width),
            map(point.y, self.shot.height, self.screen.height),
        ))
    }

    /// The screenshot pixel showing screen pixel `point`.
    #[must_use]
    pub fn to_shot(&self, point: Point) -> Point {
        let map = |v: u32, shot: u32, screen: u32| -> u32 {
            if screen == 0 {
                return 0;
            }
            let mapped = u64::from(v) * u64::from(shot) / u64::from(screen);
            u32::try_from(mapped)
                .unwrap_or(u32::MAX)
                .min(shot.saturating_sub(1))
        };
        Point::new(
            map(point.x, self.shot.width, self.screen.width),
            map(point.y, self.shot.height, self.screen.height),
        )
    }
}

/// Scales `frame` to `scale.shot` and encodes it as PNG.
///
/// # Errors
/// When the frame does not hold `width × height × 3` bytes, or encoding fails.
pub fn encode_png(frame: &Frame, scale: &Scale) -> Result<Vec<u8>, String> {
    let image = image::RgbImage::from_raw(frame.size.width, frame.size.height, frame.rgb.clone())
        .ok_or_else(|| {
        format!(
            "the capture holds {} bytes, not {}×{}×3",
            frame.rgb.len(),
            frame.size.width,
            frame.size.height
        )
    })?;
    let image = if scale.shot == frame.size {
        image
    } else {
        image::imageops::resize(
            &image,
            scale.shot.width,
            scale.shot.height,
            FilterType::Triangle,
        )
    };
    let mut png = Vec::new();
    PngEncoder::new(&mut png)
        .write_image(
            image.as_raw(),
            image.width(),
            image.height(),
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|err| format!("cannot encode the screenshot as PNG: {err}"))?;
    Ok(png)
}
