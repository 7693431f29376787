//! Colors a program may set or query: the 256-color palette (OSC 4/104) and the dynamic
//! foreground, background and cursor colors (OSC 10/11/12, 110/111/112).
//!
//! The model only records overrides; the theme lives in the renderer's config. For queries it
//! answers with the override or the xterm default, which is what programs expect to parse.

/// A 24-bit color.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rgb {
    pub r: u8,
    pub g: u8,
    pub b: u8,
}

/// Which dynamic color an OSC 10–12 sequence addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynamicColor {
    Foreground = 0,
    Background = 1,
    Cursor = 2,
}

#[derive(Clone, Debug)]
pub struct ColorOverrides {
    palette: Box<[Option<Rgb>; 256]>,
    dynamic: [Option<Rgb>; 3],
}

impl Default for ColorOverrides {
    fn default() -> Self {
        ColorOverrides { palette: Box::new([None; 256]), dynamic: [None; 3] }
    }
}

impl ColorOverrides {
    pub fn palette(&self, index: u8) -> Option<Rgb> {
        self.palette[index as usize]
    }

    pub fn set_palette(&mut self, index: u8, color: Option<Rgb>) {
        self.palette[index as usize] = color;
    }

    pub fn reset_palette(&mut self) {
        self.palette.fill(None);
    }

    pub fn dynamic(&self, which: DynamicColor) -> Option<Rgb> {
        self.dynamic[which as usize]
    }

    pub fn set_dynamic(&mut self, which: DynamicColor, color: Option<Rgb>) {
        self.dynamic[which as usize] = color;
    }

    /// The palette color a query reports: the override or xterm's default.
    pub fn effective_palette(&self, index: u8) -> Rgb {
        self.palette(index).unwrap_or_else(|| default_palette(index))
    }

    pub fn effective_dynamic(&self, which: DynamicColor) -> Rgb {
        self.dynamic(which).unwrap_or(match which {
            DynamicColor::Foreground | DynamicColor::Cursor => Rgb { r: 0xd8, g: 0xd8, b: 0xd8 },
            DynamicColor::Background => Rgb { r: 0x18, g: 0x18, b: 0x18 },
        })
    }
}

/// xterm's default 256-color palette.
pub fn default_palette(index: u8) -> Rgb {
    const ANSI: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x00, 0x00),
        (0x00, 0xcd, 0x00),
        (0xcd, 0xcd, 0x00),
        (0x00, 0x00, 0xee),
        (0xcd, 0x00, 0xcd),
        (0x00, 0xcd, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x7f, 0x7f, 0x7f),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x5c, 0x5c, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    match index {
        0..=15 => {
            let (r, g, b) = ANSI[index as usize];
            Rgb { r, g, b }
        }
        16..=231 => {
            let i = index - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            Rgb { r: level(i / 36), g: level((i / 6) % 6), b: level(i % 6) }
        }
        232..=255 => {
            let v = 8 + (index - 232) * 10;
            Rgb { r: v, g: v, b: v }
        }
    }
}

/// Parse an X11 color spec as programs send them: `rgb:R/G/B` (1–4 hex digits per channel),
/// `#RGB`, `#RRGGBB`, `#RRRGGGBBB` or `#RRRRGGGGBBBB`.
pub fn parse_color_spec(spec: &str) -> Option<Rgb> {
    fn scale(hex: &str) -> Option<u8> {
        if hex.is_empty() || hex.len() > 4 {
            return None;
        }
        let value = u32::from_str_radix(hex, 16).ok()?;
        let max = (1u32 << (4 * hex.len())) - 1;
        Some(((value * 255 + max / 2) / max) as u8)
    }
    if let Some(rest) = spec.strip_prefix("rgb:") {
        let mut parts = rest.split('/');
        let (r, g, b) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        return Some(Rgb { r: scale(r)?, g: scale(g)?, b: scale(b)? });
    }
    let hex = spec.strip_prefix('#')?;
    if hex.is_empty() || hex.len() % 3 != 0 || hex.len() > 12 || !hex.is_ascii() {
        return None;
    }
    let n = hex.len() / 3;
    // In the `#` form, shorter channels are the high digits (X11's convention).
    let channel = |i: usize| -> Option<u8> {
        let digits = &hex[i * n..(i + 1) * n];
        let value = u32::from_str_radix(digits, 16).ok()?;
        Some(((value << (16 - 4 * n as u32)) >> 8) as u8)
    };
    Some(Rgb { r: channel(0)?, g: channel(1)?, b: channel(2)? })
}

/// The reply format xterm uses: `rgb:rrrr/gggg/bbbb`.
pub fn format_color_spec(c: Rgb) -> String {
    format!("rgb:{:02x}{:02x}/{:02x}{:02x}/{:02x}{:02x}", c.r, c.r, c.g, c.g, c.b, c.b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn color_specs_in_every_form() {
        let red = Some(Rgb { r: 255, g: 0, b: 0 });
        assert_eq!(parse_color_spec("rgb:ff/00/00"), red);
        assert_eq!(parse_color_spec("rgb:ffff/0/0"), red);
        assert_eq!(parse_color_spec("rgb:f/0/0"), red);
        assert_eq!(parse_color_spec("#f00"), Some(Rgb { r: 0xf0, g: 0, b: 0 }));
        assert_eq!(parse_color_spec("#ff0000"), red);
        assert_eq!(parse_color_spec("#ffff00000000"), red);
        for bad in ["", "rgb:", "rgb:1/2", "rgb:1/2/3/4", "#12", "rgb:zz/0/0", "#ééé", "red"] {
            assert_eq!(parse_color_spec(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn default_palette_matches_xterm() {
        assert_eq!(default_palette(1), Rgb { r: 0xcd, g: 0, b: 0 });
        assert_eq!(default_palette(16), Rgb { r: 0, g: 0, b: 0 });
        assert_eq!(default_palette(231), Rgb { r: 255, g: 255, b: 255 });
        assert_eq!(default_palette(232), Rgb { r: 8, g: 8, b: 8 });
        assert_eq!(format_color_spec(Rgb { r: 1, g: 0xab, b: 0xff }), "rgb:0101/abab/ffff");
    }
}
