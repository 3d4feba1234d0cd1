//! An SVG line chart of one bench's headline ratio per shape, written by hand: a few
//! dozen elements need no plotting library, and the output is byte-for-byte stable.

use std::fmt::Write;

/// One point: a shape on the x axis and its ratio; `clean` is false for flagged readings,
/// which are drawn hollow and red so they are never mistaken for results.
pub struct Point {
    pub label: String,
    pub value: f64,
    pub clean: bool,
}

/// A horizontal line to judge the points against (1.0x, or a 90% bar).
pub struct Guide {
    pub value: f64,
    pub label: String,
}

pub struct Chart {
    pub title: String,
    pub y_label: String,
    pub points: Vec<Point>,
    pub guides: Vec<Guide>,
}

const W: f64 = 820.0;
const H: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 110.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tick step of 1, 2 or 5 times a power of ten giving about `target` ticks over `span`.
pub fn nice_step(span: f64, target: usize) -> f64 {
    if !(span > 0.0 && span.is_finite()) {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let m = raw / magnitude;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

impl Chart {
    /// The y range: from zero to a tick step above the largest point or guide.
    fn y_range(&self) -> (f64, f64, f64) {
        let top = self
            .points
            .iter()
            .map(|p| p.value)
            .chain(self.guides.iter().map(|g| g.value))
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let top = if top > 0.0 { top * 1.1 } else { 1.0 };
        let step = nice_step(top, 6);
        (0.0, (top / step).ceil() * step, step)
    }

    pub fn svg(&self) -> String {
        let (y0, y1, step) = self.y_range();
        let plot_w = W - LEFT - RIGHT;
        let plot_h = H - TOP - BOTTOM;
        let y_px = |v: f64| TOP + plot_h * (1.0 - (v - y0) / (y1 - y0));
        let n = self.points.len();
        let x_px = |i: usize| LEFT + plot_w * (i as f64 + 0.5) / n.max(1) as f64;

        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="28" font-size="16" text-anchor="middle">{}</text>"#,
            W / 2.0,
            escape(&self.title)
        );
        // Grid and y ticks.
        let mut v = y0;
        while v <= y1 + step * 1e-9 {
            let y = y_px(v);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
                W - RIGHT
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + 4.0,
                trim_float(v)
            );
            v += step;
        }
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/>"##
        );
        let _ = writeln!(
            s,
            r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
            TOP + plot_h / 2.0,
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        for g in &self.guides {
            let y = y_px(g.value);
            let _ = writeln!(
                s,
                r##"<line class="guide" x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#c80" stroke-dasharray="6 4"/>"##,
                W - RIGHT
            );
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" fill="#c80">{}</text>"##,
                LEFT + 6.0,
                y - 4.0,
                escape(&g.label)
            );
        }
        if self.points.iter().any(|p| !p.clean) {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#c00">hollow red: flagged reading (WRONG or FALLBACK)</text>"##,
                W - RIGHT,
                TOP - 8.0
            );
        }
        if n == 0 {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">no readings</text>"#,
                W / 2.0,
                TOP + plot_h / 2.0
            );
        }
        let path: Vec<String> = self
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.value.is_finite())
            .map(|(i, p)| format!("{:.1},{:.1}", x_px(i), y_px(p.value)))
            .collect();
        if path.len() > 1 {
            let _ = writeln!(
                s,
                r##"<polyline fill="none" stroke="#1f5fa8" stroke-width="2" points="{}"/>"##,
                path.join(" ")
            );
        }
        for (i, p) in self.points.iter().enumerate() {
            let x = x_px(i);
            if p.value.is_finite() {
                let (fill, stroke) = if p.clean {
                    ("#1f5fa8", "#1f5fa8")
                } else {
                    ("white", "#c00")
                };
                let _ = writeln!(
                    s,
                    r#"<circle class="point" cx="{x:.1}" cy="{:.1}" r="5" fill="{fill}" stroke="{stroke}" stroke-width="2"><title>{}: {}</title></circle>"#,
                    y_px(p.value),
                    escape(&p.label),
                    trim_float(p.value)
                );
                let _ = writeln!(
                    s,
                    r#"<text class="value" x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"#,
                    y_px(p.value) - 10.0,
                    trim_float((p.value * 1000.0).round() / 1000.0)
                );
            }
            let ly = TOP + plot_h + 14.0;
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-30 {x:.1} {ly:.1})">{}</text>"#,
                escape(&p.label)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

/// `0.9`, `1`, `2.5`: at most four decimals, no trailing zeros.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(values: &[(&str, f64, bool)]) -> Chart {
        Chart {
            title: "copy <ceiling> & friends".into(),
            y_label: "fraction of reference".into(),
            points: values
                .iter()
                .map(|&(l, v, c)| Point {
                    label: l.into(),
                    value: v,
                    clean: c,
                })
                .collect(),
            guides: vec![Guide {
                value: 0.9,
                label: "90%".into(),
            }],
        }
    }

    #[test]
    fn nice_steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(1.1, 6), 0.2);
        assert_eq!(nice_step(100.0, 5), 20.0);
        assert_eq!(nice_step(7.0, 6), 2.0);
        assert_eq!(nice_step(0.0, 6), 1.0);
    }

    #[test]
    fn every_point_is_drawn_and_flagged_points_are_hollow() {
        let svg = chart(&[
            ("1 MiB", 0.5, true),
            ("64 MiB", 0.93, true),
            ("1 GiB", 0.95, false),
        ])
        .svg();
        assert_eq!(svg.matches(r#"class="point""#).count(), 3);
        assert_eq!(svg.matches(r##"fill="white" stroke="#c00""##).count(), 1);
        assert!(svg.contains("<polyline"));
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn text_is_escaped() {
        let svg = chart(&[("a<b", 1.0, true)]).svg();
        assert!(svg.contains("copy &lt;ceiling&gt; &amp; friends"));
        assert!(svg.contains(">a&lt;b<"));
        assert!(!svg.contains("a<b"));
    }

    #[test]
    fn higher_values_are_drawn_higher() {
        let svg = chart(&[("lo", 0.2, true), ("hi", 0.8, true)]).svg();
        let cy: Vec<f64> = svg
            .match_indices(r#"class="point" cx=""#)
            .map(|(i, _)| {
                let rest = &svg[i..];
                let c = rest.find("cy=\"").unwrap() + 4;
                rest[c..c + rest[c..].find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(cy[1] < cy[0], "{cy:?}");
    }

    #[test]
    fn an_empty_chart_says_so() {
        let svg = chart(&[]).svg();
        assert!(svg.contains("no readings"));
        assert!(svg.contains(r#"class="guide""#));
    }

    #[test]
    fn same_input_same_bytes() {
        let a = chart(&[("x", 1.0, true)]).svg();
        assert_eq!(a, chart(&[("x", 1.0, true)]).svg());
    }
}
