//! Secret forms after gitleaks' high-confidence rules (fake, real-shaped samples), and text
//! that must stay as it is.

use super::redact;

/// `n` characters cycling through `alphabet`, so samples have a token's length and alphabet.
fn fill(alphabet: &str, n: usize) -> String {
    alphabet.chars().cycle().take(n).collect()
}

const ALNUM: &str = "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7";
const HEX: &str = "0a1b2c3d4e5f6789";

/// (text, the secret that must be gone, what must remain around it).
fn secrets() -> Vec<(String, String, &'static str)> {
    let mut cases: Vec<(String, String, &'static str)> = Vec::new();
    let mut add =
        |text: String, secret: String, keep: &'static str| cases.push((text, secret, keep));
    // AWS: the credentials file, access key ids.
    let aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".to_string();
    add(
        format!("aws_secret_access_key = {aws}"),
        aws.clone(),
        "aws_secret_access_key = ",
    );
    add(
        format!("AWS_SECRET_ACCESS_KEY={aws}"),
        aws.clone(),
        "AWS_SECRET_ACCESS_KEY=",
    );
    add(
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE".into(),
        "IOSFODNN7EXAMPLE".into(),
        "AKIA",
    );
    add(
        "key ASIAY34FZKBOKMUTVV7A here".into(),
        "Y34FZKBOKMUTVV7A".into(),
        "ASIA",
    );
    // GitHub.
    for prefix in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        let secret = fill(ALNUM, 36);
        add(
            format!("git push https://{prefix}{secret}@github.com/o/r"),
            secret,
            prefix,
        );
    }
    let pat = format!("11ABCDEFG0{}", fill(ALNUM, 72));
    add(
        format!("GH={}", format_args!("github_pat_{pat}")),
        pat.clone(),
        "github_pat_",
    );
    add(format!("token github_pat_{pat} x"), pat, "github_pat_");
    // GitLab.
    let gl = fill(ALNUM, 20);
    add(
        format!("glab auth login --hostname x glpat-{gl}"),
        gl,
        "glpat-",
    );
    // Slack tokens and webhooks.
    let slack = format!("123456789012-1234567890123-{}", fill(ALNUM, 24));
    add(format!("SLACK=xoxb-{slack}"), slack, "xoxb-");
    let hook = format!("T00000000/B00000000/{}", fill(ALNUM, 24));
    add(
        format!("curl -X POST https://hooks.slack.com/services/{hook} -d x"),
        hook,
        "https://hooks.slack.com/services/",
    );
    // Stripe.
    for prefix in ["sk_live_", "rk_test_", "sk_test_"] {
        let s = format!("51H8{}", fill(ALNUM, 30));
        add(format!("stripe {prefix}{s}"), s, prefix);
    }
    // Google API key and OAuth client secret.
    let google = format!("Sy{}", fill("D-9tSrke72PouQMnMX_a7eZSW0jkFMBWY", 33));
    add(format!("key=AIza{google}&q=1"), google, "AIza");
    let gocspx = fill(ALNUM, 28);
    add(format!("secret GOCSPX-{gocspx}"), gocspx, "GOCSPX-");
    // OpenAI, Anthropic.
    let openai = fill(ALNUM, 48);
    add(
        format!("openai sk-proj-{openai}"),
        openai.clone(),
        "sk-proj-",
    );
    add(format!("openai sk-{openai}"), openai, "sk-");
    let anthropic = fill("aB3-dE6_gH9", 93);
    add(format!("x sk-ant-api03-{anthropic}"), anthropic, "sk-ant-");
    // npm, PyPI, Hugging Face, Twilio, SendGrid.
    let npm = fill(ALNUM, 36);
    add(
        format!("//registry.npmjs.org/:_authToken=npm_{npm}"),
        npm,
        "npm_",
    );
    let pypi = format!("AgEIcHlwaS5vcmc{}", fill(ALNUM, 70));
    add(format!("password = pypi-{pypi}"), pypi, "pypi-");
    let hf = fill("abCDefGHijKLmnOPqrSTuvWXyz", 34);
    add(
        format!("huggingface-cli login --token hf_{hf}"),
        hf.clone(),
        "hf_",
    );
    add(format!("HF hf_{hf} done"), hf, "hf_");
    let twilio = fill(HEX, 32);
    add(format!("twilio SK{twilio}"), twilio, "SK");
    let sendgrid = format!("{}.{}", fill(ALNUM, 22), fill(ALNUM, 43));
    add(format!("SENDGRID SG.{sendgrid}"), sendgrid, "SG.");
    // A bare JWT.
    let jwt_body = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    add(
        format!("cookie eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{jwt_body} end"),
        jwt_body.to_string(),
        "eyJ",
    );
    // Private key blocks, whole (and one the screen shows only the start of).
    let body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDfakeFAKEfakeFAKEfakeFAKEfakeFAKE";
    add(
        format!("$ cat id\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n$ "),
        body.to_string(),
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    );
    let rsa = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE/Wm/Rr500P";
    add(
        format!("-----BEGIN RSA PRIVATE KEY-----\n{rsa}\n-----END RSA PRIVATE KEY-----"),
        rsa.to_string(),
        "-----END RSA PRIVATE KEY-----",
    );
    add(
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nAgEAAoIBAQC7VJTUt9Us8cKj"
            .into(),
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC".into(),
        "-----BEGIN PRIVATE KEY-----",
    );
    add(
        "run: cat <<EOF↵-----BEGIN RSA PRIVATE KEY-----↵Proc-Type: 4,ENCRYPTED↵MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi ⋯900 more⋯ x".into(),
        "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi".into(),
        "-----BEGIN RSA PRIVATE KEY-----",
    );
    // Passwords in URLs, any scheme.
    add(
        "psql postgres://app:s3cr3tPass@db.internal:5432/app".into(),
        "s3cr3tPass".into(),
        "postgres://app:",
    );
    add(
        "mongodb+srv://u:Pa55w0rd@c0.mongodb.net/x".into(),
        "Pa55w0rd".into(),
        "@c0.mongodb.net",
    );
    add(
        "redis://:hunter22@cache:6379".into(),
        "hunter22".into(),
        "redis://:",
    );
    // Assignments and flags.
    add("password: hunter2".into(), "hunter2".into(), "password: ");
    add(
        "  DB_PASSWORD: hunter2".into(),
        "hunter2".into(),
        "DB_PASSWORD: ",
    );
    add(
        "DB_PASSWORD=hunter2 ./run".into(),
        "hunter2".into(),
        "DB_PASSWORD=",
    );
    add(
        "export STRIPE_SECRET_KEY='abc123def456'".into(),
        "abc123def456".into(),
        "STRIPE_SECRET_KEY='",
    );
    add(
        "client_secret: 8f2b1c9e7d".into(),
        "8f2b1c9e7d".into(),
        "client_secret: ",
    );
    add(
        r#"{"api_key": "k-12345", "user": "me"}"#.into(),
        "k-12345".into(),
        r#""user": "me""#,
    );
    add(
        "mysql -uroot -phunter2 app".into(),
        "hunter2".into(),
        "mysql -uroot -p",
    );
    add(
        "curl -u admin:hunter2 https://x.test".into(),
        "hunter2".into(),
        "-u admin:",
    );
    add(
        "curl --user admin:hunter2 https://x.test".into(),
        "hunter2".into(),
        "--user admin:",
    );
    add(
        "deploy --db-password=hunter2".into(),
        "hunter2".into(),
        "--db-password=",
    );
    add(
        "X-Api-Key: 0123456789abcdef".into(),
        "0123456789abcdef".into(),
        "X-Api-Key: ",
    );
    cases
}

/// Text that must come back unchanged.
const ORDINARY: &[&str] = &[
    "the token expired, please log in again",
    "git show 3f786850e387550fdab836ed7e6dc881de23001b",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "ls /home/me/.ssh/id_ed25519.pub src/secret_store/token_cache.rs",
    "password:",
    "password: ",
    "password:\n  next: 1",
    "echo aGVsbG8= dG9rZW4= c2VjcmV0",
    "max_tokens: 4096",
    "tokenizer: bert-base",
    "PWD=/home/me OLDPWD=/tmp",
    "open http://localhost:8080/path and https://user@github.com/o/r.git",
    "git clone git@github.com:org/repo.git",
    "pip install scikit-learn; risk-assessment-framework-v2",
    "password=$DB_PASSWORD token: ${TOKEN} api_key: <your key>",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
    "mysql -u root -p app",
    "curl -u admin https://x.test",
    "from huggingface_hub import hf_hub_download",
    "npm_config_cache=/tmp/npm",
    "sort_key=name primary_key: true",
    "mysql --password --host db",
    "SKU12345 is in stock",
    "secret: false",
    "<div class=\"sk-fading-circle-spinner\">",
    "grep -- '-----BEGIN PRIVATE KEY-----' *.pem\nno key in these files here",
];

#[test]
fn every_secret_form_is_redacted_keeping_what_it_is() {
    let mut missed = Vec::new();
    for (text, secret, keep) in secrets() {
        let out = redact(&text);
        if out.contains(&secret) || !out.contains(keep) || !out.contains("[REDACTED]") {
            missed.push(format!("{text:?}\n  -> {out:?}"));
        }
    }
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[test]
fn ordinary_text_is_left_alone() {
    let changed: Vec<String> = ORDINARY
        .iter()
        .filter(|t| redact(t) != **t)
        .map(|t| format!("{t:?} -> {:?}", redact(t)))
        .collect();
    assert!(changed.is_empty(), "{}", changed.join("\n"));
}

#[test]
fn a_megabyte_of_output_is_redacted_quickly() {
    let text: String = (0..20_000)
        .map(|i| format!("line {i} of build output, nothing secret\n"))
        .collect();
    let text = format!("{text}TOKEN=abc\n");
    let start = std::time::Instant::now();
    let out = redact(&text);
    assert!(out.ends_with("TOKEN=[REDACTED]\n"));
    // Generous for a debug build on a busy machine; release is ~10x faster.
    assert!(
        start.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn every_rule_compiles_and_keeps_what_the_secret_was() {
    assert_eq!(super::compiled().rules.len(), super::rules::RULES.len());
    assert_eq!(
        redact("psql postgres://app:s3cr3t@db/x; -----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----"),
        "psql postgres://app:[REDACTED]@db/x; -----BEGIN EC PRIVATE KEY-----[REDACTED]-----END EC PRIVATE KEY-----"
    );
    assert_eq!(
        redact("GH=github_pat_11ABCDEFG0abcdefghijklmnop"),
        "GH=github_pat_…[REDACTED]"
    );
    assert_eq!(
        redact(r#"password: "correct horse battery""#),
        r#"password: "[REDACTED]""#
    );
}

#[test]
fn non_ascii_output_stays_fast() {
    let text: String = (0..20_000)
        .map(|i| format!("│ ✓ тест {i} — ok ✨\n"))
        .collect();
    let start = std::time::Instant::now();
    assert_eq!(redact(&text), text);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}
