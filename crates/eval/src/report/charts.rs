//! The report's charts, drawn with `plotters` to SVG strings the page embeds inline. Text is
//! written as SVG `<text>` (plotters' SVG backend, no font files read), and the `xmlns`
//! attribute is dropped: inline SVG in HTML needs none, and the page then names no URL at all.
//! A chart with nothing to show is `None` (the page says so instead of drawing empty axes).

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use super::ReportError;

const SIZE: (u32, u32) = (720, 300);
const BAR: RGBColor = RGBColor(0x3b, 0x6e, 0xa8);

/// One bar a label.
pub(crate) struct Bars<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub labels: Vec<String>,
    pub values: Vec<f64>,
    /// The top of the value axis (100 for a percentage); `None`: a little above the highest bar.
    pub top: Option<f64>,
}

/// How many tasks took 0, 1, 2, … rounds (in bins of several rounds past 30 distinct values).
pub(crate) fn rounds_histogram(rounds: &[u32]) -> Result<Option<String>, ReportError> {
    let Some(&max) = rounds.iter().max() else {
        return Ok(None);
    };
    let width = (max + 1).div_ceil(30).max(1);
    let bins = (max / width + 1) as usize;
    let mut counts = vec![0.0; bins];
    for &r in rounds {
        if let Some(count) = counts.get_mut((r / width) as usize) {
            *count += 1.0;
        }
    }
    let labels = (0..bins)
        .map(|i| {
            let low = i as u32 * width;
            if width == 1 {
                low.to_string()
            } else {
                format!("{low}-{}", low + width - 1)
            }
        })
        .collect();
    bars(&Bars {
        title: "Rounds per attempt",
        x_desc: "rounds",
        y_desc: "attempts",
        labels,
        values: counts,
        top: None,
    })
}

/// A bar chart; `None` when there are no bars.
pub(crate) fn bars(chart: &Bars<'_>) -> Result<Option<String>, ReportError> {
    if chart.values.is_empty() {
        return Ok(None);
    }
    let err = |message: String| ReportError::Chart {
        chart: chart.title.to_string(),
        message,
    };
    let n = u32::try_from(chart.values.len()).map_err(|e| err(e.to_string()))?;
    let highest = chart.values.iter().copied().fold(0.0, f64::max);
    let top = match chart.top {
        Some(top) if top >= highest && top > 0.0 => top,
        _ if highest > 0.0 => highest * 1.1,
        _ => 1.0,
    };
    // Names that would overlap (about 7 pixels a character across 640) are replaced by the
    // bar's number, 1-based, as the report's task table numbers its tasks.
    let label_chars: usize = chart.labels.iter().map(|l| l.chars().count() + 2).sum();
    let named = label_chars * 7 <= 640;
    let x_desc = if named {
        chart.x_desc.to_string()
    } else {
        format!("{} (number in the table)", chart.x_desc)
    };
    let label = |v: &SegmentValue<u32>| match v {
        SegmentValue::Exact(i) | SegmentValue::CenterOf(i) => {
            if named {
                chart.labels.get(*i as usize).cloned().unwrap_or_default()
            } else {
                (i + 1).to_string()
            }
        }
        SegmentValue::Last => String::new(),
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let mut plot = ChartBuilder::on(&root)
            .caption(chart.title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            // plotters' integer ranges hold both ends: 0..n-1 is n segments.
            .build_cartesian_2d((0..n - 1).into_segmented(), 0.0..top)
            .map_err(|e| err(e.to_string()))?;
        plot.configure_mesh()
            .disable_x_mesh()
            .x_desc(x_desc)
            .y_desc(chart.y_desc)
            .x_labels(chart.labels.len().min(40))
            .x_label_formatter(&label)
            .draw()
            .map_err(|e| err(e.to_string()))?;
        plot.draw_series(
            Histogram::vertical(&plot)
                .style(BAR.filled())
                .margin(2)
                .data((0..n).zip(chart.values.iter().copied())),
        )
        .map_err(|e| err(e.to_string()))?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(Some(svg.replacen(
        r#" xmlns="http://www.w3.org/2000/svg""#,
        "",
        1,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_chart_is_inline_svg_with_no_url_and_nothing_to_draw_is_none() {
        let drawn = rounds_histogram(&[1, 3, 3, 7]).unwrap().unwrap_or_default();
        // One bar: plotters' segmented range 0..0.
        let one = bars(&Bars {
            title: "Resolved by language (%)",
            x_desc: "language",
            y_desc: "%",
            labels: vec!["python".into()],
            values: vec![100.0],
            top: Some(100.0),
        })
        .unwrap()
        .unwrap_or_default();
        let actual = (
            drawn.starts_with("<svg"),
            drawn.contains("<rect"),
            drawn.contains("Rounds per attempt"),
            drawn.contains("http"),
            rounds_histogram(&[]).unwrap(),
            one.contains("<rect"),
        );
        let expected = (true, true, true, false, None, true);
        assert_eq!(actual, expected);
    }
}
