//! The bench report: data (`report.json`), prose (`report.md`) and the ratio chart (`ratios.svg`).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;
use serde_json::Value;

/// Everything one `cargo xtask bench` run measured.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Unix time the run started.
    pub generated_unix: u64,
    /// Whether `--quick` was given.
    pub quick: bool,
    /// The machine it ran on.
    pub machine: Machine,
    /// One section per comparison.
    pub sections: Vec<Section>,
    /// Every subject-versus-baseline ratio, as charted.
    pub ratios: Vec<Ratio>,
}

/// Facts about the machine and tools.
#[derive(Debug, Serialize)]
pub struct Machine {
    /// Logical CPUs.
    pub cores: usize,
    /// CPU model name.
    pub cpu: String,
    /// Kernel release.
    pub kernel: String,
    /// `rustc --version`.
    pub rustc: String,
    /// `node --version`, when present.
    pub node: Option<String>,
    /// `python3 --version`, when present.
    pub python: Option<String>,
    /// How peak RSS was measured.
    pub rss_method: String,
    /// 1-minute load average when the run started and when it ended (other work on the machine).
    pub load: (f64, f64),
}

/// One comparison.
#[derive(Debug, Serialize)]
pub struct Section {
    /// Short id (`latency`, `throughput`, …).
    pub id: String,
    /// Heading.
    pub title: String,
    /// What was measured and how.
    pub method: String,
    /// The human table.
    pub table: Table,
    /// Skips, caveats, failures.
    pub notes: Vec<String>,
    /// Structured figures for machines.
    pub data: Value,
    /// Wall time the section took, builds included.
    pub seconds: f64,
}

impl Section {
    /// An empty section.
    pub fn new(id: &str, title: &str, method: impl Into<String>) -> Self {
        Self {
            id: id.to_owned(),
            title: title.to_owned(),
            method: method.into(),
            table: Table::default(),
            notes: Vec::new(),
            data: Value::Null,
            seconds: 0.0,
        }
    }

    /// Add a note (printed as it is added, so long runs show progress).
    pub fn note(&mut self, text: impl Into<String>) {
        let text = text.into();
        eprintln!("xtask: [{}] {text}", self.id);
        self.notes.push(text);
    }
}

/// A table: header and rows of cells.
#[derive(Debug, Default, Serialize)]
pub struct Table {
    /// Column headings.
    pub columns: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these headings.
    pub fn with_columns(columns: &[&str]) -> Self {
        Self {
            columns: columns.iter().map(|&c| c.to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Append a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }
}

/// `subject / baseline` of one cost (time or memory): above 1 means the subject costs more.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// Section id.
    pub section: String,
    /// What is compared (e.g. `echo hi median`).
    pub label: String,
    /// The measured subject.
    pub subject: String,
    /// The baseline it is divided by.
    pub baseline: String,
    /// The ratio.
    pub value: f64,
}

impl Ratio {
    /// `subject_cost / baseline_cost`, or `None` when the baseline is zero or either is not finite.
    pub fn of(section: &str, label: &str, subject: (&str, f64), baseline: (&str, f64)) -> Option<Self> {
        let value = subject.1 / baseline.1;
        (value.is_finite() && value > 0.0).then(|| Self {
            section: section.to_owned(),
            label: label.to_owned(),
            subject: subject.0.to_owned(),
            baseline: baseline.0.to_owned(),
            value,
        })
    }

    /// `label: subject / baseline` as one line.
    pub fn caption(&self) -> String {
        format!("{}: {} / {}", self.label, self.subject, self.baseline)
    }
}

impl Report {
    /// Write `report.json`, `report.md` and `ratios.svg` into `dir`.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_string_pretty(self)?;
        std::fs::write(dir.join("report.json"), json).context("writing report.json")?;
        std::fs::write(dir.join("ratios.svg"), crate::svg::ratio_chart(&self.ratios))
            .context("writing ratios.svg")?;
        std::fs::write(dir.join("report.md"), self.markdown()).context("writing report.md")?;
        Ok(())
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let m = &self.machine;
        let _ = writeln!(md, "# shellgate benchmark report\n");
        let _ = writeln!(
            md,
            "Mode: {}. Machine: {} × {}, Linux {}; {}; node {}; {}. Peak RSS: {}. Load average (1 min) \
             {:.2} at the start, {:.2} at the end.\n",
            if self.quick { "quick" } else { "full" },
            m.cores,
            m.cpu,
            m.kernel,
            m.rustc,
            m.node.as_deref().unwrap_or("absent"),
            m.python.as_deref().unwrap_or("python absent"),
            m.rss_method,
            m.load.0,
            m.load.1,
        );
        md.push_str(
            "Every figure is compared with a baseline measured in the same run. A ratio is \
             `subject / baseline` of a cost (time or memory): 1 is parity, 2 means twice the cost, 0.5 \
             half. Absolute times depend on the machine; ratios travel better. The chart plots every ratio \
             on a log scale.\n\n![ratios](ratios.svg)\n\n",
        );
        for section in &self.sections {
            let _ = writeln!(
                md,
                "## {}\n\n{} (Section time: {:.0} s.)\n",
                section.title, section.method, section.seconds
            );
            if !section.table.rows.is_empty() {
                md.push_str(&markdown_table(&section.table));
                md.push('\n');
            }
            for note in &section.notes {
                let _ = writeln!(md, "- {note}");
            }
            if !section.notes.is_empty() {
                md.push('\n');
            }
        }
        if !self.ratios.is_empty() {
            md.push_str("## All ratios\n\n");
            let mut table = Table::with_columns(&["section", "comparison", "ratio"]);
            for r in &self.ratios {
                table.push(vec![r.section.clone(), r.caption(), ratio_number(r.value)]);
            }
            md.push_str(&markdown_table(&table));
        }
        md
    }
}

fn markdown_table(table: &Table) -> String {
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| {} |",
        table
            .columns
            .iter()
            .map(|c| cell(c))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(md, "|{}", "---|".repeat(table.columns.len()));
    for row in &table.rows {
        let _ = writeln!(
            md,
            "| {} |",
            row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
        );
    }
    md
}

/// The 1-minute load average.
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// A duration given in microseconds, in a readable unit.
pub fn micros(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else if us >= 1.0 {
        format!("{us:.1} µs")
    } else {
        format!("{:.0} ns", us * 1e3)
    }
}

/// A size given in KiB, in MiB.
pub fn kib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "n/a".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

/// A ratio cell.
pub fn ratio_cell(value: Option<f64>) -> String {
    value
        .filter(|v| v.is_finite())
        .map_or_else(|| "–".to_owned(), |v| format!("×{}", ratio_number(v)))
}

/// A ratio with two significant decimals however small it is (`0.00037`, not `0.00`).
pub fn ratio_number(value: f64) -> String {
    if value >= 0.1 || value <= 0.0 {
        format!("{value:.2}")
    } else {
        let decimals = (1.0 - value.log10().floor()) as usize;
        format!("{value:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_refuse_zero_baselines() {
        assert!(Ratio::of("s", "l", ("a", 1.0), ("b", 0.0)).is_none());
        let r = Ratio::of("s", "true median", ("shellgate", 3.0), ("bash", 2.0)).unwrap();
        assert!((r.value - 1.5).abs() < 1e-12);
        assert_eq!(r.caption(), "true median: shellgate / bash");
    }

    #[test]
    fn markdown_has_sections_tables_and_escapes_pipes() {
        let mut section = Section::new("latency", "Per-command latency", "how");
        section.table = Table::with_columns(&["command", "median"]);
        section.table.push(vec!["ls | wc -l".into(), micros(1500.0)]);
        section.notes.push("a note".into());
        let report = Report {
            generated_unix: 0,
            quick: true,
            machine: Machine {
                cores: 2,
                cpu: "cpu".into(),
                kernel: "6".into(),
                rustc: "rustc".into(),
                node: None,
                python: None,
                rss_method: "x".into(),
                load: (0.5, 1.0),
            },
            sections: vec![section],
            ratios: vec![Ratio::of("latency", "l", ("a", 2.0), ("b", 1.0)).unwrap()],
        };
        let md = report.markdown();
        assert!(md.contains("## Per-command latency"));
        assert!(md.contains("| ls \\| wc -l | 1.50 ms |"));
        assert!(md.contains("- a note"));
        assert!(md.contains("| latency | l: a / b | 2.00 |"));
    }

    #[test]
    fn units_are_readable() {
        assert_eq!(micros(0.25), "250 ns");
        assert_eq!(micros(12.34), "12.3 µs");
        assert_eq!(micros(2_500_000.0), "2.50 s");
        assert_eq!(kib(Some(2048)), "2.0 MiB");
        assert_eq!(kib(None), "n/a");
        assert_eq!(ratio_cell(Some(1.234)), "×1.23");
        assert_eq!(ratio_cell(None), "–");
        assert_eq!(ratio_cell(Some(0.00037)), "×0.00037");
        assert_eq!(ratio_cell(Some(0.02)), "×0.020");
    }
}
