//! Where credentials live on a machine: one list for both walls. The guard denies a command that
//! reads one of them (judged on its parse), the sandbox hides them from every profile (enforced
//! by the kernel) — so a secret the guard knows is never one the kernel lets through.

const CLOUD: &str = "cloud credentials";
const STORED: &str = "stored credentials";
const HISTORY: &str = "a shell history (tokens typed on the command line)";
const WALLET: &str = "a cryptocurrency wallet's keys";
const LOCAL: &str = "the token of a local server that runs code for whoever presents it";

/// Credential files and folders under home, with what they are. (Each AI agent's own credential
/// is listed by `sandbox::resolve::Client::credentials`: the agent itself may read its own.)
pub const HOME: &[(&str, &str)] = &[
    (".ssh", "SSH keys and config"),
    (".aws", CLOUD),
    (".config/gcloud", CLOUD),
    (".azure", CLOUD),
    (".kube", CLOUD),
    (".oci", CLOUD),
    (".config/doctl", CLOUD),
    (".docker/config.json", STORED),
    (".config/containers/auth.json", STORED),
    (".netrc", STORED),
    (".git-credentials", STORED),
    (".config/git/credentials", STORED),
    (".pgpass", STORED),
    (".my.cnf", STORED),
    (".vault-token", STORED),
    (".npmrc", STORED),
    (".yarnrc.yml", STORED),
    (".yarnrc", STORED),
    (".config/pip/pip.conf", STORED),
    (".cache/huggingface/token", STORED),
    (".kaggle/kaggle.json", STORED),
    (".databrickscfg", STORED),
    (".pip/pip.conf", STORED),
    (".config/pypoetry/auth.toml", STORED),
    (".config/glab-cli", STORED),
    (".fly", STORED),
    (".config/sops", STORED),
    (".pulumi/credentials.json", STORED),
    (".config/ngrok", STORED),
    (".bundle/config", STORED),
    (".pypirc", STORED),
    (".gnupg", STORED),
    (".password-store", STORED),
    (".config/gh", STORED),
    (".config/hub", STORED),
    (".config/github-copilot", STORED),
    (".cargo/credentials", STORED),
    (".cargo/credentials.toml", STORED),
    (".gem/credentials", STORED),
    (".composer/auth.json", STORED),
    (".config/composer/auth.json", STORED),
    (".terraform.d/credentials.tfrc.json", STORED),
    (".config/rclone/rclone.conf", STORED),
    (".s3cfg", STORED),
    (".boto", STORED),
    (".m2/settings.xml", STORED),
    (".m2/settings-security.xml", STORED),
    (".gradle/gradle.properties", STORED),
    (".config/op", STORED),
    (".config/configstore", STORED),
    (".local/share/keyrings", STORED),
    (".mozilla", STORED),
    (".thunderbird", STORED),
    (".config/google-chrome", STORED),
    (".config/chromium", STORED),
    (".config/BraveSoftware", STORED),
    (".config/microsoft-edge", STORED),
    ("Library/Keychains", STORED),
    ("Library/Cookies", STORED),
    ("Library/Application Support/Google/Chrome", STORED),
    ("Library/Application Support/Firefox", STORED),
    (".bash_history", HISTORY),
    (".zsh_history", HISTORY),
    (".histfile", HISTORY),
    (".local/share/fish/fish_history", HISTORY),
    (".python_history", HISTORY),
    (".node_repl_history", HISTORY),
    (".psql_history", HISTORY),
    (".mysql_history", HISTORY),
    // Red team, round 9: the network is open, so a token to a server on localhost is a way out
    // of the sandbox — Claude Code's IDE connections (the editor's extension runs code for it)
    // and Jupyter's kernels and servers.
    (".claude/ide", LOCAL),
    (".local/share/jupyter/runtime", LOCAL),
    // Red team, round 15: each printed its decoy from inside a session.
    (".docker/machine", STORED),
    (".minikube", CLOUD),
    (".config/openstack", CLOUD),
    (".terraformrc", STORED),
    (".mylogin.cnf", STORED),
    (".sentryclirc", STORED),
    (".rediscli_history", HISTORY),
    (
        ".Xauthority",
        "the X display's key (whoever has it can type into every window)",
    ),
    // Red team, round 16: histories of other shells, CLIs' tokens, wallets.
    (".zhistory", HISTORY),
    (".sh_history", HISTORY),
    (".ash_history", HISTORY),
    (".local/share/atuin", HISTORY),
    (".config/stripe", STORED),
    (".wrangler", STORED),
    (".huggingface/token", STORED),
    (".supabase/access-token", STORED),
    (".config/age/keys.txt", "age's private keys"),
    (".circleci/cli.yml", STORED),
    (".ivy2/.credentials", STORED),
    (".sbt/.credentials", STORED),
    (".mix/hex.config", STORED),
    (".pub-cache/credentials.json", STORED),
    (".nuget/NuGet/NuGet.Config", STORED),
    (".config/hcloud", CLOUD),
    (".config/Bitwarden CLI", STORED),
    (".ngrok2", STORED),
    (".ethereum/keystore", WALLET),
    (".bitcoin/wallet.dat", WALLET),
];

/// Stored logins, by their file name wherever they are.
pub const STORED_FILES: [&str; 6] = [
    ".git-credentials",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
];

/// How SSH private keys' names begin (`id_ed25519_work`); the `.pub` halves are public.
pub const SSH_KEYS: [&str; 4] = ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"];

/// Files whose name alone says they hold credentials, wherever they are: environment files
/// (`.env`, `.env.production`, direnv's `.envrc`; not templates like `.env.example`), stored
/// logins (`.netrc`, `.pgpass`, `.git-credentials`, …) and SSH private keys. `lower` is the
/// file's name in lower case. The sandbox hides these wherever it finds them in the project;
/// the guard refuses a tool or command that names one. (Key stores and certificates, `*.key`,
/// `*.pem`, are the guard's alone: projects commit them as test fixtures their tests read.)
///
/// Each such name begins with `.`, `_` or `id_`: the sandbox's walk of the project passes over
/// the others without looking further (`sandbox::resolve::project_secrets`).
pub fn file_name_kind(lower: &str) -> Option<&'static str> {
    if crate::sandbox::resolve::is_env_secret(lower) {
        return Some("an environment file with secrets");
    }
    if SSH_KEYS.iter().any(|k| lower.starts_with(k)) && !lower.ends_with(".pub") {
        return Some("an SSH private key");
    }
    if STORED_FILES.contains(&lower) {
        return Some(STORED);
    }
    None
}

/// Credentials of the system itself (root reads them through file permissions).
pub const SYSTEM: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key",
    "/etc/ssl/private",
    // Red team, round 15: VPN and Wi-Fi keys, certificates' private keys, Kerberos' keytab,
    // cluster admin credentials.
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
    "/etc/letsencrypt",
    "/etc/krb5.keytab",
    "/etc/rancher",
    "/etc/kubernetes",
    // Issue 34's red team: where containers and services get their credentials mounted at run
    // time — Docker's and Compose's secrets, Kubernetes' service-account token, systemd's
    // `LoadCredential=`.
    "/run/secrets",
    "/var/run/secrets",
    "/run/credentials",
];

/// Words that mark an environment variable as a credential (`HF_TOKEN`, `DB_PASSWORD`,
/// `MY_API_KEY`): the guard flags a command that sends such a `$VARIABLE` off the machine, the
/// sandbox removes such variables. Upper case; each wall adds its own looser words.
pub const ENV_NAME_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
    // Red team, round 16: `MYSQL_PWD` (never `PWD`, `OLDPWD`: those are folders), `SSHPASS`,
    // `RAILS_MASTER_KEY`.
    "_PWD",
    "SSHPASS",
    "MASTER_KEY",
];
