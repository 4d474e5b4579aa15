//! The `format`s a form's string field may declare (`email`, `uri`, `date`, `date-time`),
//! checked the way a person filling a form expects: plausible, not RFC-exhaustive. The server
//! validates again; these only catch typing slips before Accept sends them.

/// `local@domain.tld`: one `@`, no spaces, a dot inside the domain.
pub fn valid_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && !text.chars().any(char::is_whitespace)
        && domain
            .split_once('.')
            .is_some_and(|(host, rest)| !host.is_empty() && !rest.is_empty())
        && !domain.ends_with('.')
}

/// An absolute URI: a scheme and what follows it (`https://example.com`, `mailto:a@b.c`).
pub fn valid_uri(text: &str) -> bool {
    !text.chars().any(char::is_whitespace) && url::Url::parse(text).is_ok()
}

/// `YYYY-MM-DD`, a real calendar day.
pub fn valid_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (
        digits(&text[0..4]),
        digits(&text[5..7]),
        digits(&text[8..10]),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339: `YYYY-MM-DDTHH:MM:SS`, optional fraction, then `Z` or `±HH:MM`.
pub fn valid_date_time(text: &str) -> bool {
    let Some((date, rest)) = text.split_once(['T', 't', ' ']) else {
        return false;
    };
    if !valid_date(date) || rest.len() < 9 {
        return false;
    }
    let (time, zone) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => rest.split_at(i),
        None => return false,
    };
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (time, None),
    };
    if fraction.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let hms: Vec<&str> = clock.split(':').collect();
    let clock_ok = matches!(hms[..], [h, m, s]
        if h.len() == 2 && m.len() == 2 && s.len() == 2
            && digits(h).is_some_and(|h| h < 24)
            && digits(m).is_some_and(|m| m < 60)
            && digits(s).is_some_and(|s| s <= 60));
    let zone_ok = match zone {
        "Z" | "z" => true,
        offset => {
            let hm: Vec<&str> = offset[1..].split(':').collect();
            matches!(hm[..], [h, m]
                if h.len() == 2 && m.len() == 2
                    && digits(h).is_some_and(|h| h < 24)
                    && digits(m).is_some_and(|m| m < 60))
        }
    };
    clock_ok && zone_ok
}

/// All-digit text as a number.
fn digits(text: &str) -> Option<u32> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_need_one_at_and_a_dotted_domain() {
        assert!(valid_email("ana@example.com"));
        for bad in [
            "ana",
            "@example.com",
            "ana@example",
            "ana@@x.com",
            "a na@x.com",
            "ana@x.",
        ] {
            assert!(!valid_email(bad), "{bad}");
        }
    }

    #[test]
    fn uris_are_absolute() {
        assert!(valid_uri("https://example.com/a?b=c"));
        assert!(valid_uri("mailto:ana@example.com"));
        assert!(!valid_uri("example.com"));
        assert!(!valid_uri("https://exa mple.com"));
    }

    #[test]
    fn dates_are_real_calendar_days() {
        assert!(valid_date("2024-02-29"));
        assert!(!valid_date("2023-02-29"), "not a leap year");
        assert!(!valid_date("2026-13-01"));
        assert!(!valid_date("2026-1-01"));
        assert!(!valid_date("2026-04-31"));
    }

    #[test]
    fn date_times_are_rfc_3339() {
        assert!(valid_date_time("2026-01-31T09:30:00Z"));
        assert!(valid_date_time("2026-01-31T09:30:00.125+02:00"));
        assert!(!valid_date_time("2026-01-31T09:30:00"), "no zone");
        assert!(!valid_date_time("2026-01-31T25:30:00Z"));
        assert!(!valid_date_time("2026-01-31"));
        assert!(!valid_date_time("2026-01-31T09:30:00+2"));
    }
}
