//! A line diff for showing a change to a settings file before it is written: the lines taken
//! out (`-`) and put in (`+`), with up to [`CONTEXT`] unchanged lines around each change.
//! Settings files are small; the longest common subsequence is worked out whole.

/// Unchanged lines shown around a change.
pub const CONTEXT: usize = 2;
/// Past this many line pairs, the change is shown as the whole old text out and the new in.
const MOST_PAIRS: usize = 4_000_000;

/// `old` against `new`, line by line; empty when they are the same.
pub fn diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let steps = if a.len().saturating_mul(b.len()) > MOST_PAIRS {
        a.iter().map(|l| Step::Out(l)).chain(b.iter().map(|l| Step::In(l))).collect()
    } else {
        steps(&a, &b)
    };
    let changed: Vec<usize> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| !matches!(s, Step::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let shown = |i: usize| changed.iter().any(|&c| c.abs_diff(i) <= CONTEXT);
    let mut out = String::new();
    let mut skipped = false;
    for (i, step) in steps.iter().enumerate() {
        if !shown(i) {
            skipped = true;
            continue;
        }
        if std::mem::take(&mut skipped) && !out.is_empty() {
            out.push_str("  …\n");
        }
        let (mark, line) = match step {
            Step::Same(l) => (' ', l),
            Step::Out(l) => ('-', l),
            Step::In(l) => ('+', l),
        };
        out.push(mark);
        out.push(' ');
        out.push_str(line);
        out.push('\n');
    }
    out
}

enum Step<'a> {
    Same(&'a str),
    Out(&'a str),
    In(&'a str),
}

fn steps<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Step<'a>> {
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let width = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * width + j] = if a[i] == b[j] {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j, mut steps) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            steps.push(Step::Same(a[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < a.len()
            && (j == b.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
        {
            // What goes out is shown before what comes in.
            steps.push(Step::Out(a[i]));
            i += 1;
        } else {
            steps.push(Step::In(b[j]));
            j += 1;
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_show_with_their_context_and_sameness_shows_nothing() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
        assert_eq!(diff(old, new), "  c\n  d\n- e\n+ E\n  f\n  g\n  h\n+ i\n");
        assert_eq!(diff(old, old), "");
        assert_eq!(diff("", "x\n"), "+ x\n");
        let far = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        assert_eq!(
            diff(far, "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"),
            "+ 0\n  1\n  2\n  …\n  8\n  9\n+ 10\n"
        );
    }
}
