//! A hand-written SVG bar chart of ratios on a log₂ axis (no plotting dependency needed).

use std::fmt::Write as _;

use crate::report::Ratio;

/// The chart's geometry, in SVG user units.
struct Layout {
    width: f64,
    label_width: f64,
    right_margin: f64,
    row: f64,
    top: f64,
    bottom: f64,
}

const L: Layout = Layout {
    width: 960.0,
    label_width: 470.0,
    right_margin: 60.0,
    row: 22.0,
    top: 56.0,
    bottom: 36.0,
};

/// The chart: one bar per ratio, starting at parity (×1), leftwards when the subject costs less and
/// rightwards when it costs more.
pub fn ratio_chart(ratios: &[Ratio]) -> String {
    let logs: Vec<f64> = ratios.iter().map(|r| r.value.log2()).collect();
    let lo = logs.iter().copied().fold(-1.0_f64, f64::min).floor().max(-10.0);
    let hi = logs.iter().copied().fold(1.0_f64, f64::max).ceil().min(16.0);
    let plot_width = L.width - L.label_width - L.right_margin;
    let x = |log: f64| L.label_width + (log.clamp(lo, hi) - lo) / (hi - lo) * plot_width;
    let height = L.top + L.bottom + L.row * ratios.len().max(1) as f64;
    let width = L.width;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="12" y="22" font-size="15" font-weight="bold">shellgate cost relative to its baselines (log₂ scale; ×1 = parity, left = cheaper)</text>"#
    );
    let axis_bottom = height - L.bottom;
    let mut tick = lo as i32;
    while f64::from(tick) <= hi {
        let tx = x(f64::from(tick));
        let stroke = if tick == 0 { "#333" } else { "#ddd" };
        let _ = writeln!(
            svg,
            r#"<line x1="{tx:.1}" y1="{:.1}" x2="{tx:.1}" y2="{axis_bottom:.1}" stroke="{stroke}"/>"#,
            L.top - 8.0
        );
        let _ = writeln!(
            svg,
            r##"<text x="{tx:.1}" y="{:.1}" text-anchor="middle" fill="#555">×{}</text>"##,
            axis_bottom + 16.0,
            tick_label(tick)
        );
        tick += 1;
    }
    if ratios.is_empty() {
        let _ = writeln!(
            svg,
            r#"<text x="12" y="{:.1}">no ratios measured</text>"#,
            L.top + 14.0
        );
    }
    for (i, (ratio, log)) in ratios.iter().zip(&logs).enumerate() {
        let y = L.top + L.row * i as f64;
        let (x0, x1) = (x(0.0), x(*log));
        let (left, width) = (x0.min(x1), (x1 - x0).abs().max(1.0));
        let fill = if ratio.value <= 1.0 { "#2a9d8f" } else { "#e76f51" };
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            L.label_width - 8.0,
            y + 14.0,
            escape(&ellipsize(&ratio.caption(), 72))
        );
        let _ = writeln!(
            svg,
            r#"<rect x="{left:.1}" y="{:.1}" width="{width:.1}" height="{:.1}" fill="{fill}"><title>{}</title></rect>"#,
            y + 3.0,
            L.row - 6.0,
            escape(&format!("{} = {:.3}", ratio.caption(), ratio.value))
        );
        // The value sits on the empty side of the parity line for cheaper bars (never over the labels),
        // and past the end of costlier ones.
        let tx = if ratio.value <= 1.0 {
            x0 + 4.0
        } else {
            left + width + 4.0
        };
        let _ = writeln!(
            svg,
            r##"<text x="{tx:.1}" y="{:.1}" fill="#333">{}</text>"##,
            y + 14.0,
            crate::report::ratio_number(ratio.value)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn tick_label(power: i32) -> String {
    if power >= 0 {
        format!("{}", 1u64 << power.min(62))
    } else {
        format!("1/{}", 1u64 << (-power).min(62))
    }
}

fn ellipsize(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(max_chars - 1).collect();
        short.push('…');
        short
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(label: &str, value: f64) -> Ratio {
        Ratio::of("s", label, ("subject", value), ("base", 1.0)).unwrap()
    }

    #[test]
    fn one_bar_per_ratio_with_escaped_labels() {
        let svg = ratio_chart(&[ratio("ls <x> & wc", 4.0), ratio("true", 0.5)]);
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<rect x=").count(), 2);
        assert!(svg.contains("ls &lt;x&gt; &amp; wc: subject / base"));
        assert!(!svg.contains("<x>"));
        // Costlier bars are drawn in the "costs more" colour, cheaper ones in the other.
        assert!(svg.contains("#e76f51") && svg.contains("#2a9d8f"));
        assert!(svg.contains(">×1/2<") && svg.contains(">×4<"));
    }

    #[test]
    fn empty_chart_says_so() {
        assert!(ratio_chart(&[]).contains("no ratios measured"));
    }

    #[test]
    fn long_labels_are_shortened() {
        assert_eq!(ellipsize("abcdef", 4), "abc…");
        assert_eq!(ellipsize("abc", 4), "abc");
    }
}
