//! Turning a `ZPixmap` image of the root window into RGB bytes: the pixel size, row padding,
//! byte order and colour masks come from the server's setup.

use kun_ports::{ComputerError, ScreenSize};
use x11rb::protocol::xproto::{ImageOrder, Screen, Setup};

/// How the root window's pixels are laid out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    bits_per_pixel: u8,
    scanline_pad: u8,
    msb_first: bool,
    masks: [u32; 3],
}

/// The shift and width of a colour mask (`0xff0000` → 16, 8).
fn mask_shape(mask: u32) -> (u32, u32) {
    if mask == 0 {
        return (0, 0);
    }
    let shift = mask.trailing_zeros();
    let width = (mask >> shift).trailing_ones();
    (shift, width)
}

/// A channel value scaled to 8 bits.
fn channel(pixel: u32, mask: u32) -> u8 {
    let (shift, width) = mask_shape(mask);
    if width == 0 {
        return 0;
    }
    let value = (pixel & mask) >> shift;
    let max = (1u32 << width) - 1;
    u8::try_from(value * 255 / max).unwrap_or(u8::MAX)
}

impl Layout {
    /// The layout of `screen`'s root visual.
    pub(super) fn of(setup: &Setup, screen: &Screen) -> Result<Self, ComputerError> {
        let format = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == screen.root_depth)
            .ok_or_else(|| {
                ComputerError::Unavailable(format!(
                    "the X server has no pixmap format for depth {}",
                    screen.root_depth
                ))
            })?;
        let visual = screen
            .allowed_depths
            .iter()
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == screen.root_visual)
            .ok_or_else(|| {
                ComputerError::Unavailable("the X server does not describe its root visual".into())
            })?;
        if !matches!(format.bits_per_pixel, 16 | 24 | 32) {
            return Err(ComputerError::Unavailable(format!(
                "screens of {} bits per pixel cannot be captured (16, 24 and 32 can)",
                format.bits_per_pixel
            )));
        }
        Ok(Self {
            bits_per_pixel: format.bits_per_pixel,
            scanline_pad: format.scanline_pad,
            msb_first: setup.image_byte_order == ImageOrder::MSB_FIRST,
            masks: [visual.red_mask, visual.green_mask, visual.blue_mask],
        })
    }

    /// The RGB bytes of a capture of `size`.
    pub(super) fn rgb_of(&self, data: &[u8], size: ScreenSize) -> Result<Vec<u8>, ComputerError> {
        let bytes_per_pixel = usize::from(self.bits_per_pixel / 8);
        let pad = usize::from(self.scanline_pad.max(8));
        let width = size.width as usize;
        let height = size.height as usize;
        let row_bits = width * usize::from(self.bits_per_pixel);
        let stride = row_bits.div_ceil(pad) * pad / 8;
        if data.len() < stride * height {
            return Err(ComputerError::Failed(format!(
                "the capture holds {} bytes, {} were expected",
                data.len(),
                stride * height
            )));
        }
        let mut rgb = Vec::with_capacity(width * height * 3);
        for row in data.chunks_exact(stride).take(height) {
            for px in row[..width * bytes_per_pixel].chunks_exact(bytes_per_pixel) {
                let mut value = 0u32;
                if self.msb_first {
                    for &b in px {
                        value = (value << 8) | u32::from(b);
                    }
                } else {
                    for &b in px.iter().rev() {
                        value = (value << 8) | u32::from(b);
                    }
                }
                rgb.push(channel(value, self.masks[0]));
                rgb.push(channel(value, self.masks[1]));
                rgb.push(channel(value, self.masks[2]));
            }
        }
        Ok(rgb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn little_endian_32_bit_pixels() {
        let layout = Layout {
            bits_per_pixel: 32,
            scanline_pad: 32,
            msb_first: false,
            masks: [0x00ff_0000, 0x0000_ff00, 0x0000_00ff],
        };
        // Two pixels: pure red, then (1, 2, 3), in BGRX order.
        let data = [0, 0, 255, 0, 3, 2, 1, 0];
        let rgb = layout
            .rgb_of(
                &data,
                ScreenSize {
                    width: 2,
                    height: 1,
                },
            )
            .unwrap();
        assert_eq!(rgb, [255, 0, 0, 1, 2, 3]);
    }

    #[test]
    fn sixteen_bit_pixels_scale_to_eight_bits_and_rows_are_padded() {
        let layout = Layout {
            bits_per_pixel: 16,
            scanline_pad: 32,
            msb_first: false,
            masks: [0xf800, 0x07e0, 0x001f],
        };
        // One white pixel per row, each row padded to 4 bytes; two rows.
        let data = [0xff, 0xff, 0, 0, 0x00, 0x00, 0, 0];
        let rgb = layout
            .rgb_of(
                &data,
                ScreenSize {
                    width: 1,
                    height: 2,
                },
            )
            .unwrap();
        assert_eq!(rgb, [255, 255, 255, 0, 0, 0]);
        assert!(
            layout
                .rgb_of(
                    &data[..4],
                    ScreenSize {
                        width: 1,
                        height: 2
                    }
                )
                .is_err()
        );
    }
}
