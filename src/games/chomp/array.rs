//! Array files: rows of capital letters, one row per line.
//!
//! Every row must have the same length. A missing newline at the end, `\r\n`
//! line endings and blank lines after the last row are tolerated; anything
//! else is an error that names the line and column.

use std::fmt;

/// What is wrong with an array file, and where (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayError {
    pub line: usize,
    pub column: Option<usize>,
    pub what: String,
}

impl fmt::Display for ArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(column) => write!(f, "line {}, column {column}: {}", self.line, self.what),
            None => write!(f, "line {}: {}", self.line, self.what),
        }
    }
}

impl std::error::Error for ArrayError {}

/// Splits and checks an array file's bytes into rows of capital letters.
pub fn parse(bytes: &[u8]) -> Result<Vec<Vec<u8>>, ArrayError> {
    let mut lines: Vec<&[u8]> = bytes
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        return Err(ArrayError {
            line: 1,
            column: None,
            what: "the file has no rows (an array needs at least one row of capital letters)"
                .into(),
        });
    }
    let width = lines[0].len();
    let mut rows = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        if let Some(col) = line.iter().position(|b| !b.is_ascii_uppercase()) {
            return Err(ArrayError {
                line: number,
                column: Some(col + 1),
                what: format!("{} is not a capital letter A-Z", describe(line, col)),
            });
        }
        if line.is_empty() {
            return Err(ArrayError {
                line: number,
                column: None,
                what: "empty line inside the array".into(),
            });
        }
        if line.len() != width {
            return Err(ArrayError {
                line: number,
                column: None,
                what: format!(
                    "row has {} letters, but the first row has {width} (rows must all be the same length)",
                    line.len()
                ),
            });
        }
        rows.push(line.to_vec());
    }
    Ok(rows)
}

/// The offending character, readable even when it is not.
fn describe(line: &[u8], col: usize) -> String {
    let rest = &line[col..];
    let decoded = (1..=rest.len().min(4)).find_map(|n| std::str::from_utf8(&rest[..n]).ok());
    match decoded.and_then(|s| s.chars().next()) {
        Some(c) if !c.is_control() => format!("{c:?}"),
        _ => format!("byte 0x{:02x}", rest[0]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_array() {
        let rows = parse(b"ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n").unwrap();
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[4], b"ITISASQUID");
    }

    #[test]
    fn tolerated() {
        assert_eq!(parse(b"AB\nCD").unwrap().len(), 2);
        assert_eq!(parse(b"AB\r\nCD\r\n").unwrap()[1], b"CD");
        assert_eq!(parse(b"AB\nCD\n\n\n").unwrap().len(), 2);
        assert_eq!(parse(b"Z").unwrap(), vec![b"Z".to_vec()]);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse(b"").unwrap_err();
        assert!(e.to_string().starts_with("line 1: the file has no rows"));
        assert_eq!(parse(b"\n\n").unwrap_err().line, 1);
        let e = parse(b"ABC\nAbC\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2, column 2: 'b' is not a capital letter A-Z"
        );
        let e = parse(b"ABC\nAB\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: row has 2 letters, but the first row has 3 (rows must all be the same length)"
        );
        let e = parse(b"ABC\n\nABC\n").unwrap_err();
        assert_eq!(e.to_string(), "line 2: empty line inside the array");
        let e = parse(b"A C\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1, column 2: ' ' is not a capital letter A-Z"
        );
        let e = parse(b"AB\x01\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1, column 3: byte 0x01 is not a capital letter A-Z"
        );
        let e = parse("AÉ\n".as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1, column 2: 'É' is not a capital letter A-Z"
        );
    }
}
