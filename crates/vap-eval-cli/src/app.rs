//! The subcommands: argument parsing, reading files, and printing what the library returns.

use crate::output::{self, Paint, SourceMap};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use rayon::prelude::*;
use std::cell::RefCell;
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;
use vap_eval::api::{
    compile, evaluate_with, Document, Manifests, MissingNamespaces, PolicySetOptions,
    RequestDocuments, UnboundPolicies,
};
use vap_eval::audit::{AuditOptions, Auditor, DumpReader, ObjectReport, RawObject, Summary};
use vap_eval::diagnostic::Severity;
use vap_eval::testing::{junit, run_file, FileReport, Status};

#[derive(Parser)]
#[command(
    name = "vap-eval",
    version,
    about = "Evaluate Kubernetes ValidatingAdmissionPolicies offline, exactly as kube-apiserver does"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate one admission request: which policies match and what the apiserver answers.
    Eval {
        /// Manifests: policies, bindings, params, namespaces, CRDs, RBAC (a file or directory;
        /// repeat the flag for more).
        #[arg(short = 'f', long = "filename", required = true)]
        manifests: Vec<PathBuf>,
        /// The object (YAML/JSON file; `-` for stdin). Leave out for a DELETE with --old-object.
        object: Option<PathBuf>,
        #[arg(long)]
        old_object: Option<PathBuf>,
        /// AdmissionRequest fields (operation, userInfo, namespace, subResource, dryRun, …).
        #[arg(long)]
        request: Option<PathBuf>,
        /// 1.30 … 1.37; default the newest.
        #[arg(long)]
        kubernetes_version: Option<String>,
        #[arg(short, long, value_enum, default_value_t = EvalOutput::Text)]
        output: EvalOutput,
        /// A policy no binding references: never evaluated (skip, the apiserver's verdict),
        /// also evaluated as if bound with Deny and shown as hypothetical (preview), or with
        /// that evaluation counting in the response (bind).
        #[arg(long, value_enum, default_value_t = Unbound::Preview)]
        unbound_policies: Unbound,
        /// A namespace the manifests do not supply: the apiserver's 404 instead of assuming it
        /// exists with only its kubernetes.io/metadata.name label.
        #[arg(long)]
        strict_namespaces: bool,
        /// Evaluate the objects exactly as written, not as the apiserver stores them.
        #[arg(long)]
        objects_as_given: bool,
        /// The request's fieldValidation (Strict, Warn or Ignore; default the apiserver's,
        /// Warn): under Strict an unknown field is a 400, as kubectl's default
        /// --validate=strict gets. Overrides the --request file's.
        #[arg(long, value_name = "DIRECTIVE")]
        field_validation: Option<String>,
    },
    /// Type-check the manifests: every diagnostic with its caret; exit code 1 on errors.
    Check {
        #[arg(short = 'f', long = "filename", required = true, num_args = 1..)]
        manifests: Vec<PathBuf>,
        #[arg(long)]
        kubernetes_version: Option<String>,
    },
    /// Run policy tests: kyverno-test.yaml, kaptest manifests, vap-eval AdmissionTest files.
    Test {
        /// Test files, or directories searched for them (default: the current directory).
        paths: Vec<PathBuf>,
        /// Also write a JUnit XML report.
        #[arg(long)]
        junit: Option<PathBuf>,
        #[arg(short, long, value_enum, default_value_t = TableOrJson::Table)]
        output: TableOrJson,
        #[arg(long)]
        kubernetes_version: Option<String>,
    },
    /// Which objects of a dump would the policies deny? Streams the dump, uses all cores.
    Audit {
        /// Policies, bindings, params, namespaces (a file or directory; repeat the flag for more).
        #[arg(short = 'f', long = "filename", required = true)]
        manifests: Vec<PathBuf>,
        /// `kubectl get -o yaml|json` output, multi-document YAML, JSON lines, directories; `-`: stdin.
        #[arg(required = true)]
        dumps: Vec<PathBuf>,
        /// Evaluate each object as an UPDATE from itself to itself instead of a CREATE.
        #[arg(long)]
        update: bool,
        /// List every object, not only those denied, warned, audited or in error.
        #[arg(long)]
        all: bool,
        #[arg(short, long, value_enum, default_value_t = TableOrJson::Table)]
        output: TableOrJson,
        #[arg(long)]
        kubernetes_version: Option<String>,
    },
    /// Print a shell completion script.
    Completions { shell: clap_complete::Shell },
}

#[derive(Clone, Copy, ValueEnum)]
enum Unbound {
    Skip,
    Preview,
    Bind,
}

#[derive(Clone, Copy, ValueEnum)]
enum EvalOutput {
    Text,
    Json,
    Yaml,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum TableOrJson {
    Table,
    Json,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let paint = Paint::for_stdout();
    let result = match cli.command {
        Command::Eval {
            manifests,
            object,
            old_object,
            request,
            kubernetes_version,
            output,
            unbound_policies,
            strict_namespaces,
            objects_as_given,
            field_validation,
        } => {
            let options = PolicySetOptions {
                kubernetes_version,
                unbound_policies: Some(match unbound_policies {
                    Unbound::Skip => UnboundPolicies::Skip,
                    Unbound::Preview => UnboundPolicies::Preview,
                    Unbound::Bind => UnboundPolicies::Bind,
                }),
                missing_namespaces: Some(if strict_namespaces {
                    MissingNamespaces::Strict
                } else {
                    MissingNamespaces::Assume
                }),
                objects_as_given,
                ..Default::default()
            };
            let docs = (object, old_object, request, field_validation);
            eval(&manifests, docs, &options, output, paint)
        }
        Command::Check { manifests, kubernetes_version } => {
            check(&manifests, kubernetes_version, paint)
        }
        Command::Test { paths, junit, output, kubernetes_version } => {
            test(paths, junit, output, kubernetes_version, paint)
        }
        Command::Audit { manifests, dumps, update, all, output, kubernetes_version } => {
            audit(&manifests, &dumps, update, all, output, kubernetes_version, paint)
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "vap-eval", &mut std::io::stdout());
            Ok(true)
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("vap-eval: {e}");
            ExitCode::from(2)
        }
    }
}

/// Files named directly, and the YAML/JSON files under directories (sorted).
fn expand(paths: &[PathBuf], keep: &dyn Fn(&Path) -> bool) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found).map_err(|e| format!("{}: {e}", p.display()))?;
            found.sort();
            out.extend(found.into_iter().filter(|f| keep(f)));
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn is_manifest(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json" | "jsonl"))
}

fn read_text(p: &Path) -> Result<String, String> {
    if p.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| format!("stdin: {e}"))?;
        return Ok(s);
    }
    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn load_manifests(paths: &[PathBuf]) -> Result<SourceMap, String> {
    let mut map = SourceMap::default();
    for p in expand(paths, &is_manifest)? {
        map.add(&p.display().to_string(), read_text(&p)?);
    }
    Ok(map)
}

/// The object, old object and request files, and `--field-validation`.
type EvalDocs = (Option<PathBuf>, Option<PathBuf>, Option<PathBuf>, Option<String>);

fn eval(
    manifests: &[PathBuf],
    (object, old_object, request, field_validation): EvalDocs,
    options: &PolicySetOptions,
    output: EvalOutput,
    paint: Paint,
) -> Result<bool, String> {
    let map = load_manifests(manifests)?;
    let set = compile(&Manifests::Text(map.text.clone()), options);
    let read = |p: &Option<PathBuf>| -> Result<Option<(String, String)>, String> {
        p.as_ref().map(|p| Ok((p.display().to_string(), read_text(p)?))).transpose()
    };
    let (object, old, req) = (read(&object)?, read(&old_object)?, read(&request)?);
    let doc = |d: &Option<(String, String)>| d.as_ref().map(|(_, t)| Document::Text(t.clone()));
    let mut request = doc(&req);
    if let Some(v) = field_validation {
        // Into the request's fields; a request text that does not read as an object is passed
        // on as it is, for the library to report.
        let fields = match &req {
            None => Ok(serde_json::Value::Null),
            Some((_, t)) => vap_eval::api::parse_input_text("request", t),
        };
        let fields = match fields {
            Ok(serde_json::Value::Null) => Some(serde_json::Map::new()),
            Ok(serde_json::Value::Object(m)) => Some(m),
            _ => None,
        };
        if let Some(mut m) = fields {
            m.insert("fieldValidation".into(), serde_json::Value::String(v));
            request = Some(Document::Object(serde_json::Value::Object(m)));
        }
    }
    let result = evaluate_with(
        &set,
        &RequestDocuments { object: doc(&object), old_object: doc(&old), request },
    );
    let inputs = [("object", &object), ("oldObject", &old), ("request", &req)];
    let text_of = |name: &str| {
        inputs
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, d)| d.as_ref())
            .map(|(_, t)| t.clone())
    };
    let allowed = result.response.allowed;
    let mut out = std::io::stdout().lock();
    match output {
        EvalOutput::Json | EvalOutput::Yaml => {
            let value = output::result_json(&result, &map, &text_of);
            let text = match output {
                EvalOutput::Json => serde_json::to_string_pretty(&value).unwrap_or_default(),
                _ => output::yaml(&value),
            };
            writeln!(out, "{text}").map_err(|e| e.to_string())?;
        }
        EvalOutput::Text => {
            let file = object.as_ref().or(old.as_ref()).map(|(n, _)| n.as_str()).unwrap_or("-");
            let text = output::eval_text(&result, &map, &text_of, file, paint);
            write!(out, "{text}").map_err(|e| e.to_string())?;
        }
    }
    Ok(allowed)
}

fn check(
    manifests: &[PathBuf],
    kubernetes_version: Option<String>,
    paint: Paint,
) -> Result<bool, String> {
    let map = load_manifests(manifests)?;
    let options = PolicySetOptions { kubernetes_version, ..Default::default() };
    let set = compile(&Manifests::Text(map.text.clone()), &options);
    let mut out = std::io::stdout().lock();
    let no_inputs = |_: &str| None;
    for d in &set.diagnostics {
        writeln!(out, "{}\n", paint.severity(d.severity, &map.render(d, &no_inputs)))
            .map_err(|e| e.to_string())?;
    }
    let errors = set.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = set.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    writeln!(
        out,
        "{}: {} policies, {} bindings; {errors} errors, {warnings} warnings",
        if errors == 0 { paint.green("ok") } else { paint.red("failed") },
        set.manifests.policies.len(),
        set.manifests.bindings.len()
    )
    .map_err(|e| e.to_string())?;
    Ok(errors == 0)
}

/// In directories, test files are found by content: any YAML whose top level is one of the
/// formats (kaptest files have no fixed name).
fn is_test_file(p: &Path) -> bool {
    if !matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(p) else { return false };
    let head: String =
        text.lines().filter(|l| !l.starts_with([' ', '-', '#'])).collect::<Vec<_>>().join("\n");
    (head.contains("cli.kyverno.io/") && head.lines().any(|l| l.trim_end() == "kind: Test"))
        || head.contains("kind: AdmissionTest")
        || ["vapTestSuites:", "testSuites:"].iter().any(|k| head.lines().any(|l| l.starts_with(k)))
        || (p.file_name().is_some_and(|n| n == "kyverno-test.yaml") && head.contains("results:"))
}

fn test(
    paths: Vec<PathBuf>,
    junit_path: Option<PathBuf>,
    output: TableOrJson,
    kubernetes_version: Option<String>,
    paint: Paint,
) -> Result<bool, String> {
    let paths = if paths.is_empty() { vec![PathBuf::from(".")] } else { paths };
    let files = expand(&paths, &is_test_file)?;
    if files.is_empty() {
        return Err("no test files found".into());
    }
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| e.to_string());
    let reports: Vec<FileReport> = files
        .iter()
        .map(|f| {
            let path = f.display().to_string();
            match std::fs::read_to_string(f) {
                Ok(text) => run_file(&path, &text, &read, kubernetes_version.as_deref()),
                Err(e) => run_file(&path, "", &|_| Err(e.to_string()), None),
            }
        })
        .collect();
    if let Some(j) = junit_path {
        std::fs::write(&j, junit(&reports)).map_err(|e| format!("{}: {e}", j.display()))?;
    }
    let failed = reports.iter().flat_map(|r| &r.cases).any(|c| c.status == Status::Fail);
    let mut out = std::io::stdout().lock();
    let text = match output {
        TableOrJson::Json => serde_json::to_string_pretty(&reports).unwrap_or_default() + "\n",
        TableOrJson::Table => output::test_table(&reports, paint),
    };
    out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    Ok(!failed)
}

/// What the worker threads compile their own `Auditor` from (the compiled programs are not
/// `Sync`): once per thread, not per object.
static AUDIT_CONFIG: OnceLock<(String, AuditOptions)> = OnceLock::new();

thread_local! {
    static AUDITOR: RefCell<Option<Auditor>> = const { RefCell::new(None) };
}

fn audit_one(raw: &RawObject) -> ObjectReport {
    AUDITOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let auditor = slot.get_or_insert_with(|| {
            let (text, options) = AUDIT_CONFIG.get().cloned().unwrap_or_default();
            Auditor::new(&text, options)
        });
        auditor.audit(raw)
    })
}

/// Documents are read on one thread in batches and evaluated on all cores; a bounded channel
/// keeps memory flat whatever the dump's size.
const BATCH: usize = 512;

fn audit(
    manifests: &[PathBuf],
    dumps: &[PathBuf],
    update: bool,
    all: bool,
    output: TableOrJson,
    kubernetes_version: Option<String>,
    paint: Paint,
) -> Result<bool, String> {
    let map = load_manifests(manifests)?;
    let options = AuditOptions { update, kubernetes_version };
    let main_auditor = Auditor::new(&map.text, options.clone());
    let diagnostics: Vec<String> =
        main_auditor.diagnostics().iter().map(|d| map.render(d, &|_: &str| None)).collect();
    let _ = AUDIT_CONFIG.set((map.text.clone(), options));
    let mut inputs = Vec::new();
    for d in dumps {
        if d.as_os_str() == "-" {
            inputs.push(d.clone());
        } else {
            inputs.extend(expand(std::slice::from_ref(d), &is_manifest)?);
        }
    }
    let progress = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos} objects ({per_sec}) {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar
    });
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Result<RawObject, ObjectReport>>>(2);
    let reader = std::thread::spawn(move || -> Result<(), String> {
        for input in inputs {
            let name = input.display().to_string();
            let source: Box<dyn BufRead> = if input.as_os_str() == "-" {
                Box::new(BufReader::with_capacity(1 << 16, std::io::stdin()))
            } else {
                let f = std::fs::File::open(&input).map_err(|e| format!("{name}: {e}"))?;
                Box::new(BufReader::with_capacity(1 << 16, f))
            };
            let mut batch = Vec::with_capacity(BATCH);
            for item in DumpReader::new(source, name) {
                batch.push(item.map_err(|p| ObjectReport::broken(p.origin, p.message)));
                if batch.len() == BATCH
                    && tx.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH))).is_err()
                {
                    return Ok(());
                }
            }
            if !batch.is_empty() && tx.send(batch).is_err() {
                return Ok(());
            }
        }
        Ok(())
    });
    // Evaluation (all cores) and output (this thread's writer) overlap: the writer formats
    // one batch's reports while the workers evaluate the next.
    let (report_tx, report_rx) = std::sync::mpsc::sync_channel::<Vec<ObjectReport>>(2);
    let evaluator = std::thread::spawn(move || {
        for batch in rx {
            let reports: Vec<ObjectReport> = batch
                .into_par_iter()
                .map(|item| match item {
                    Ok(raw) => audit_one(&raw),
                    Err(broken) => broken,
                })
                .collect();
            if report_tx.send(reports).is_err() {
                return;
            }
        }
    });
    let mut summary = Summary::default();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut first = true;
    let w = |e: std::io::Error| e.to_string();
    if output == TableOrJson::Json {
        write!(out, "{{\"objects\": [").map_err(w)?;
    }
    for reports in report_rx {
        for r in &reports {
            summary.add(r);
            if !(all || r.is_notable()) {
                continue;
            }
            match output {
                TableOrJson::Json => {
                    let sep = if first { "\n  " } else { ",\n  " };
                    out.write_all(sep.as_bytes()).map_err(w)?;
                    let text = serde_json::to_vec(r).map_err(|e| e.to_string())?;
                    out.write_all(&text).map_err(w)?;
                }
                TableOrJson::Table => {
                    if first {
                        writeln!(out, "{}", paint.bold("OUTCOME     OBJECT  (WHERE)"))
                            .map_err(w)?;
                    }
                    writeln!(out, "{}", output::audit_line(r, paint)).map_err(w)?;
                }
            }
            first = false;
        }
        if let Some(bar) = &progress {
            bar.inc(reports.len() as u64);
        }
    }
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    evaluator.join().map_err(|_| "an evaluation thread panicked".to_string())?;
    reader.join().map_err(|_| "the reader thread panicked".to_string())??;
    match output {
        TableOrJson::Json => {
            let tail = serde_json::json!({"summary": summary, "diagnostics": diagnostics});
            let tail = serde_json::to_string_pretty(&tail).unwrap_or_default();
            writeln!(out, "\n], {}", tail.trim_start_matches('{')).map_err(w)?;
        }
        TableOrJson::Table => {
            for d in &diagnostics {
                writeln!(out, "\n{d}").map_err(w)?;
            }
            write!(out, "\n{}", output::audit_summary(&summary, paint)).map_err(w)?;
        }
    }
    out.flush().map_err(w)?;
    Ok(true)
}
