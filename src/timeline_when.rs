//! The times `forge timeline --since/--until` accept, as a person types them: an RFC 3339 time,
//! a date or a time of day on the local clock, a span back from now (`2h`, `3d`), or a word
//! (`today`, `yesterday`, `now`). Timeline events are stored in UTC; these are turned into the
//! same instant, so "since 09:00" means 09:00 where the person is.

use jiff::civil::{Date, DateTime, Time};
use jiff::{Span, Timestamp, ZonedDateTime as Zoned};

/// What the flags accept, for error messages and `--help`.
pub const ACCEPTED: &str = "a date (2026-11-30), a local time (09:00, 2026-11-30 09:00), an RFC 3339 time (2026-11-30T09:00:00Z), a span back from now (90s, 30m, 2h, 3d, 1w, 1h30m, `2h ago`), or today / yesterday / now";

/// The instant `text` names, read against `now` (whose time zone is the person's).
pub fn parse(text: &str, now: &Zoned) -> Result<Timestamp, String> {
    let t = text.trim();
    let fail = || format!("`{text}` is not a time: use {ACCEPTED}");
    let tz = now.time_zone().clone();
    let start_of = |d: Date| {
        d.to_zoned_datetime(tz.clone())
            .map(|z| z.timestamp())
            .map_err(|e| format!("`{text}`: {e}"))
    };
    match t.to_ascii_lowercase().as_str() {
        "now" => return Ok(now.timestamp()),
        "today" => return start_of(now.date()),
        "yesterday" => return start_of(now.date().yesterday().map_err(|e| e.to_string())?),
        _ => {}
    }
    if let Some(span) = relative(t) {
        return now
            .checked_sub(span)
            .map(|z| z.timestamp())
            .map_err(|e| format!("`{text}` reaches too far back: {e}"));
    }
    if let Ok(ts) = t.parse::<Timestamp>() {
        return Ok(ts);
    }
    if let Ok(dt) = t.replacen(' ', "T", 1).parse::<DateTime>()
        && t.contains(':')
    {
        return dt
            .to_zoned_datetime(tz.clone())
            .map(|z| z.timestamp())
            .map_err(|e| format!("`{text}`: {e}"));
    }
    if let Ok(d) = t.parse::<Date>() {
        return start_of(d);
    }
    if let Ok(time) = t.parse::<Time>() {
        return now
            .date()
            .to_datetime(time)
            .to_zoned_datetime(tz)
            .map(|z| z.timestamp())
            .map_err(|e| format!("`{text}`: {e}"));
    }
    Err(fail())
}

/// `2h`, `30m`, `1h30m`, `3 days`, `2h ago`: a span back from now. `m` is minutes (months
/// and years are no use for a session log and would be ambiguous).
fn relative(t: &str) -> Option<Span> {
    let t = t.strip_suffix("ago").unwrap_or(t).trim();
    if t.is_empty() {
        return None;
    }
    let mut span = Span::new();
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let n: i64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let letters = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        let unit = &rest[..letters];
        rest = rest[letters..].trim_start();
        span = match unit {
            "s" | "sec" | "secs" | "second" | "seconds" => span.try_seconds(span.get_seconds() + n),
            "m" | "min" | "mins" | "minute" | "minutes" => span.try_minutes(span.get_minutes() + n),
            "h" | "hr" | "hrs" | "hour" | "hours" => span.try_hours(span.get_hours() as i64 + n),
            "d" | "day" | "days" => span.try_hours(span.get_hours() as i64 + 24 * n),
            "w" | "week" | "weeks" => span.try_hours(span.get_hours() as i64 + 24 * 7 * n),
            _ => return None,
        }
        .ok()?;
    }
    Some(span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::{Offset, TimeZone};

    /// 2026-11-30 15:00 at UTC+02:00.
    fn now() -> Zoned {
        let tz = TimeZone::fixed(Offset::constant(2));
        "2026-11-30T15:00:00"
            .parse::<DateTime>()
            .unwrap()
            .to_zoned_datetime(tz)
            .unwrap()
    }

    fn utc(text: &str) -> String {
        parse(text, &now()).unwrap().to_string()
    }

    #[test]
    fn dates_times_and_words_are_local() {
        assert_eq!(utc("2026-11-29"), "2026-11-28T22:00:00Z");
        assert_eq!(utc("2026-11-29 09:30"), "2026-11-29T07:30:00Z");
        assert_eq!(utc("2026-11-29T09:30:15"), "2026-11-29T07:30:15Z");
        assert_eq!(utc("09:00"), "2026-11-30T07:00:00Z");
        assert_eq!(utc("today"), "2026-11-29T22:00:00Z");
        assert_eq!(utc("Yesterday"), "2026-11-28T22:00:00Z");
        assert_eq!(utc("now"), "2026-11-30T13:00:00Z");
    }

    #[test]
    fn rfc3339_keeps_its_own_offset() {
        assert_eq!(utc("2026-11-30T09:00:00Z"), "2026-11-30T09:00:00Z");
        assert_eq!(utc("2026-11-30T09:00:00+05:00"), "2026-11-30T04:00:00Z");
    }

    #[test]
    fn relative_spans_count_back_from_now() {
        assert_eq!(utc("2h"), "2026-11-30T11:00:00Z");
        assert_eq!(utc("30m"), "2026-11-30T12:30:00Z");
        assert_eq!(utc("90s"), "2026-11-30T12:58:30Z");
        assert_eq!(utc("1h30m"), "2026-11-30T11:30:00Z");
        assert_eq!(utc("3 days"), "2026-11-27T13:00:00Z");
        assert_eq!(utc("1w"), "2026-11-23T13:00:00Z");
        assert_eq!(utc("2h ago"), "2026-11-30T11:00:00Z");
    }

    #[test]
    fn anything_else_is_an_error_that_lists_what_works() {
        for bad in [
            "tomorrow",
            "2x",
            "h",
            "",
            "2026-13-01",
            "25:00",
            "ago",
            "3 fortnights",
        ] {
            let e = parse(bad, &now()).unwrap_err();
            assert!(
                e.contains("is not a time") && e.contains("yesterday"),
                "{bad}: {e}"
            );
        }
    }
}
