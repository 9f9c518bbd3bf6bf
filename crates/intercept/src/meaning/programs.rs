//! The option tables of the programs deny rules most often name. Each lists the options that
//! take a value (so a value is never taken for an operand, nor an operand for a value), the
//! spellings of one option, and whether the program accepts unique abbreviations of long
//! options (GNU getopt, git, curl, wget and npm do; cobra's docker and kubectl and clap's cargo
//! do not). Programs with subcommands have a table of global options and one per subcommand.

use super::table::Table;

/// A program deny rules can match by meaning.
#[derive(Debug)]
pub(crate) struct Program {
    /// Its name.
    pub name: &'static str,
    /// Its options (for a program with subcommands: the global ones, before the subcommand).
    pub table: &'static Table,
    /// Its subcommands, when it has them.
    pub subcommands: Option<&'static Subcommands>,
}

/// How a program's subcommand is found and read.
#[derive(Debug)]
pub(crate) struct Subcommands {
    /// The table of a subcommand (by its canonical name).
    pub table: fn(&str) -> Option<&'static Table>,
    /// Other names of subcommands (`i` → `install`; two words: `container rm` → `rm`).
    pub aliases: &'static [(&'static str, &'static str)],
    /// Global options may also follow the subcommand.
    pub globals_anywhere: bool,
    /// The subcommands, when a unique prefix of one names it (npm).
    pub abbreviated: &'static [&'static str],
    /// A first word `+toolchain` selects a toolchain (cargo).
    pub toolchain: bool,
}

impl Subcommands {
    /// The canonical name of the subcommand written `word`.
    pub fn resolve<'w>(&self, word: &'w str) -> std::borrow::Cow<'w, str> {
        if let Some((_, to)) = self.aliases.iter().find(|(from, _)| *from == word) {
            return (*to).into();
        }
        if self.abbreviated.is_empty() || self.abbreviated.contains(&word) || word.is_empty() {
            return word.into();
        }
        let mut hits = self.abbreviated.iter().filter(|c| c.starts_with(word));
        match (hits.next(), hits.next()) {
            (Some(only), None) => self.resolve(only).into_owned().into(),
            _ => word.into(),
        }
    }

    /// Whether `word` names a subcommand (by any of its names).
    pub fn knows(&self, word: &str) -> bool {
        (self.table)(&self.resolve(word)).is_some()
    }
}

/// The program named `name`, when it has a table.
pub(crate) fn program(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}

static PROGRAMS: &[Program] = &[
    simple("rm", &RM),
    simple("cp", &CP),
    simple("mv", &MV),
    simple("chmod", &CHMOD),
    simple("chown", &CHOWN),
    simple("chgrp", &CHOWN),
    simple("find", &FIND),
    simple("curl", &CURL),
    simple("wget", &WGET),
    Program {
        name: "git",
        table: &super::git::GLOBALS,
        subcommands: Some(&super::git::SUBCOMMANDS),
    },
    Program {
        name: "docker",
        table: &DOCKER,
        subcommands: Some(&DOCKER_SUBCOMMANDS),
    },
    Program {
        name: "kubectl",
        table: &KUBECTL,
        subcommands: Some(&KUBECTL_SUBCOMMANDS),
    },
    Program {
        name: "npm",
        table: &NPM,
        subcommands: Some(&NPM_SUBCOMMANDS),
    },
    Program {
        name: "cargo",
        table: &CARGO,
        subcommands: Some(&CARGO_SUBCOMMANDS),
    },
];

const fn simple(name: &'static str, table: &'static Table) -> Program {
    Program {
        name,
        table,
        subcommands: None,
    }
}

/// `-f` means "never prompt", as `--interactive=never` does; `-i` and `-I` prompt.
static RM: Table = Table::new(
    "r|R|recursive f|force d|dir v|verbose i I interactive? one-file-system no-preserve-root \
     preserve-root? help version",
)
.abbreviations()
.value_means(&[
    ("interactive", "never", "f"),
    ("interactive", "no", "f"),
    ("interactive", "none", "f"),
    ("interactive", "once", "I"),
    ("interactive", "always", "i"),
    ("interactive", "yes", "i"),
]);

static CP: Table = Table::new(
    "r|R|recursive f|force a|archive>d+r d v|verbose i|interactive n|no-clobber u|update? \
     l|link s|symbolic-link t|target-directory= T|no-target-directory S|suffix= b backup? \
     reflink? sparse= preserve? no-preserve= p L|dereference P|no-dereference H \
     x|one-file-system attributes-only copy-contents debug parents remove-destination \
     strip-trailing-slashes Z context? keep-directory-symlink help version",
)
.abbreviations();

static MV: Table = Table::new(
    "f|force i|interactive n|no-clobber v|verbose u|update? t|target-directory= \
     T|no-target-directory S|suffix= b backup? strip-trailing-slashes Z context exchange \
     no-copy debug help version",
)
.abbreviations();

static CHMOD: Table = Table::new(
    "R|recursive v|verbose c|changes f|silent|quiet reference= preserve-root no-preserve-root \
     dereference h|no-dereference L H P help version",
)
.abbreviations()
.modes();

static CHOWN: Table = Table::new(
    "R|recursive v|verbose c|changes f|silent|quiet h|no-dereference dereference reference= \
     from= preserve-root no-preserve-root L H P help version",
)
.abbreviations();

/// `find`: options and tests are whole words after one dash; `-exec` and its kin take the words
/// up to `;` or `{} +`; with no starting point it searches `.`.
static FIND: Table = Table::new(
    "L H P D= name= iname= path= ipath= wholename= iwholename= regex= iregex= regextype= \
     lname= ilname= type= xtype= size= perm= user= group= uid= gid= mtime= atime= ctime= \
     mmin= amin= cmin= newer= anewer= cnewer= used= links= inum= samefile= maxdepth= \
     mindepth= fstype= context= printf= fprint= fprint0= fls= fprintf= files0-from= \
     neweraa= neweraB= newerac= neweram= newerat= newerBa= newerBB= newerBc= newerBm= \
     newerBt= newerca= newercB= newercc= newercm= newerct= newerma= newermB= newermc= \
     newermm= newermt= delete print print0 prune quit ls depth mount xdev noleaf daystart \
     follow ignore_readdir_race noignore_readdir_race empty executable readable writable \
     nouser nogroup true false o|or a|and not warn nowarn exec; execdir; ok; okdir; \
     help version",
)
.dash_long()
.default_operand(".");

static CURL: Table = Table::new(
    "X|request= H|header= d|data= data-raw= data-binary= data-urlencode= data-ascii= F|form= \
     form-string= o|output= O|remote-name T|upload-file= u|user= A|user-agent= e|referer= \
     b|cookie= c|cookie-jar= K|config= x|proxy= U|proxy-user= E|cert= cert-type= key= \
     key-type= cacert= capath= m|max-time= connect-timeout= retry= retry-delay= \
     retry-max-time= w|write-out= r|range= Y|speed-limit= y|speed-time= z|time-cond= \
     C|continue-at= D|dump-header= t|telnet-option= Q|quote= P|ftp-port= limit-rate= \
     max-filesize= max-redirs= url= resolve= connect-to= interface= output-dir= json= \
     variable= request-target= oauth2-bearer= aws-sigv4= unix-socket= abstract-unix-socket= \
     dns-servers= proto= proto-redir= proto-default= tls-max= ciphers= netrc-file= trace= \
     trace-ascii= stderr= local-port= preproxy= proxy-header= create-file-mode= \
     s|silent S|show-error L|location f|fail fail-with-body k|insecure v|verbose i|include \
     I|head G|get g|globoff N|no-buffer n|netrc q|disable j|junk-session-cookies \
     J|remote-header-name l|list-only M|manual p|proxytunnel R|remote-time Z|parallel \
     0|http1.0 1|tlsv1 2|sslv2 3|sslv3 4|ipv4 6|ipv6 #|progress-bar compressed http1.1 \
     http2 http3 create-dirs remote-name-all location-trusted raw tcp-nodelay ssl-reqd \
     no-keepalive fail-early digest basic ntlm negotiate anyauth h|help? V|version",
)
.abbreviations();

/// `wget -nc`, `-nv`, `-nd`, `-nH`, `-np`: `-n` with a letter.
static WGET: Table = Table::new(
    "O|output-document= o|output-file= a|append-output= i|input-file= B|base= e|execute= \
     t|tries= T|timeout= w|wait= Q|quota= P|directory-prefix= l|level= U|user-agent= \
     A|accept= R|reject= D|domains= I|include-directories= X|exclude-directories= n= \
     post-data= post-file= method= body-data= body-file= header= user= password= http-user= \
     http-password= load-cookies= save-cookies= certificate= private-key= ca-certificate= \
     ca-directory= limit-rate= referer= bind-address= dns-timeout= connect-timeout= \
     read-timeout= waitretry= cut-dirs= default-page= restrict-file-names= config= \
     max-redirect= ftp-user= ftp-password= proxy-user= proxy-password= secure-protocol= \
     regex-type= accept-regex= reject-regex= report-speed= progress= use-askpass= \
     r|recursive m|mirror N|timestamping c|continue q|quiet v|verbose no-verbose \
     k|convert-links K|backup-converted p|page-requisites H|span-hosts L|relative \
     F|force-html S|server-response b|background x|force-directories E|adjust-extension \
     4|inet4-only 6|inet6-only no-check-certificate spider delete-after no-parent \
     no-clobber no-directories content-disposition trust-server-names auth-no-challenge \
     ignore-length no-cookies keep-session-cookies save-headers https-only h|help \
     V|version d|debug",
)
.abbreviations();

static DOCKER: Table = Table::new(
    "H|host= c|context= config= l|log-level= D|debug tls tlsverify tlscacert= tlscert= \
     tlskey= v|version h|help",
);

static DOCKER_SUBCOMMANDS: Subcommands = Subcommands {
    table: docker_table,
    aliases: &[
        ("container run", "run"),
        ("container create", "create"),
        ("container rm", "rm"),
        ("container remove", "rm"),
        ("container exec", "exec"),
        ("container kill", "kill"),
        ("container stop", "stop"),
        ("container ls", "ps"),
        ("container list", "ps"),
        ("container ps", "ps"),
        ("image rm", "rmi"),
        ("image remove", "rmi"),
        ("image push", "push"),
        ("image pull", "pull"),
        ("image build", "build"),
        ("builder build", "build"),
        ("buildx build", "build"),
    ],
    globals_anywhere: false,
    abbreviated: &[],
    toolchain: false,
};

fn docker_table(sub: &str) -> Option<&'static Table> {
    static RUN: Table = Table::new(
        "a|attach= add-host= annotation= blkio-weight= c|cpu-shares= cap-add= cap-drop= \
         cgroup-parent= cgroupns= cidfile= cpu-period= cpu-quota= cpu-rt-period= \
         cpu-rt-runtime= cpus= cpuset-cpus= cpuset-mems= d|detach detach-keys= device= \
         device-cgroup-rule= device-read-bps= device-read-iops= device-write-bps= \
         device-write-iops= disable-content-trust dns= dns-option= dns-search= domainname= \
         entrypoint= e|env= env-file= expose= gpus= group-add= health-cmd= health-interval= \
         health-retries= health-start-period= health-timeout= h|hostname= init i|interactive \
         ip= ip6= ipc= isolation= kernel-memory= l|label= label-file= link= link-local-ip= \
         log-driver= log-opt= mac-address= m|memory= memory-reservation= memory-swap= \
         memory-swappiness= mount= name= network|net= network-alias= no-healthcheck \
         oom-kill-disable oom-score-adj= pid= pids-limit= platform= privileged p|publish= \
         P|publish-all pull= q|quiet read-only restart= rm runtime= security-opt= shm-size= \
         sig-proxy? stop-signal= stop-timeout= storage-opt= sysctl= tmpfs= t|tty ulimit= \
         u|user= userns= uts= v|volume= volume-driver= volumes-from= w|workdir= \
         use-api-socket help",
    )
    .posix();
    static EXEC: Table = Table::new(
        "d|detach detach-keys= e|env= env-file= i|interactive privileged t|tty u|user= \
         w|workdir= help",
    )
    .posix();
    static RM: Table = Table::new("f|force l|link v|volumes help");
    static RMI: Table = Table::new("f|force no-prune platform= help");
    static KILL: Table = Table::new("s|signal= help");
    static STOP: Table = Table::new("s|signal= t|time|timeout= help");
    static PUSH: Table = Table::new("a|all-tags disable-content-trust platform= q|quiet help");
    static BUILD: Table = Table::new(
        "t|tag= f|file= build-arg= target= platform= no-cache pull q|quiet o|output= secret= \
         ssh= network= label= progress= cache-from= cache-to= load push add-host= help",
    );
    static PS: Table = Table::new("a|all f|filter= format= n|last= l|latest no-trunc q|quiet s|size help");
    static PRUNE: Table = Table::new("a|all f|force volumes filter= help");
    Some(match sub {
        "run" | "create" => &RUN,
        "exec" => &EXEC,
        "rm" => &RM,
        "rmi" => &RMI,
        "kill" => &KILL,
        "stop" | "restart" => &STOP,
        "push" | "pull" => &PUSH,
        "build" => &BUILD,
        "ps" => &PS,
        "system" | "container" | "image" | "volume" | "network" | "builder" => &PRUNE,
        _ => return None,
    })
}

static KUBECTL: Table = Table::new(
    "n|namespace= context= cluster= user= s|server= kubeconfig= token= as= as-group= as-uid= \
     request-timeout= cache-dir= certificate-authority= client-certificate= client-key= \
     insecure-skip-tls-verify tls-server-name= username= password= match-server-version v= \
     log-flush-frequency= profile= profile-output= warnings-as-errors disable-compression help",
);

static KUBECTL_SUBCOMMANDS: Subcommands = Subcommands {
    table: kubectl_table,
    aliases: &[],
    globals_anywhere: true,
    abbreviated: &[],
    toolchain: false,
};

fn kubectl_table(sub: &str) -> Option<&'static Table> {
    static DELETE: Table = Table::new(
        "A|all-namespaces all f|filename= R|recursive k|kustomize= l|selector= field-selector= \
         force grace-period= now o|output= cascade? wait? i|interactive ignore-not-found \
         dry-run? raw= timeout=",
    );
    static APPLY: Table = Table::new(
        "f|filename= k|kustomize= R|recursive l|selector= prune all force grace-period= \
         o|output= dry-run? server-side field-manager= overwrite? validate? wait timeout=",
    );
    static GET: Table = Table::new(
        "A|all-namespaces o|output= l|selector= w|watch watch-only field-selector= \
         L|label-columns= show-labels sort-by= f|filename= k|kustomize= R|recursive \
         chunk-size= raw= subresource= ignore-not-found no-headers show-kind",
    );
    static EXEC: Table = Table::new("c|container= i|stdin t|tty f|filename= q|quiet pod-running-timeout=");
    static OTHER: Table = Table::new(
        "A|all-namespaces f|filename= R|recursive k|kustomize= l|selector= o|output= \
         field-selector= dry-run? all",
    );
    Some(match sub {
        "delete" => &DELETE,
        "apply" | "replace" | "create" => &APPLY,
        "get" | "describe" => &GET,
        "exec" => &EXEC,
        "scale" | "rollout" | "drain" | "cordon" | "uncordon" | "label" | "annotate" | "patch" | "edit"
        | "logs" | "port-forward" | "cp" | "run" | "expose" | "set" | "taint" => &OTHER,
        _ => return None,
    })
}

/// npm's configuration options, accepted anywhere on its command line.
static NPM: Table = Table::new(
    "g|global w|workspace= workspaces? include-workspace-root registry= tag= otp= access= \
     loglevel= prefix|C= userconfig= globalconfig= cache= scope= f|force dry-run y|yes \
     S|save D|save-dev O|save-optional E|save-exact B|save-bundle P|save-prod \
     legacy-peer-deps omit= include= install-strategy= before= cpu= os= libc= auth-type= \
     json parseable l|long s|silent q|quiet d ignore-scripts foreground-scripts \
     script-shell= node-options= c|call= package= depth= location= provenance \
     provenance-file= sbom-format= fetch-retries= fetch-timeout= \
     h|help v|version",
)
.abbreviations();

static NPM_COMMANDS: &[&str] = &[
    "access",
    "adduser",
    "audit",
    "bugs",
    "cache",
    "ci",
    "completion",
    "config",
    "dedupe",
    "deprecate",
    "diff",
    "dist-tag",
    "docs",
    "doctor",
    "edit",
    "exec",
    "explain",
    "explore",
    "find-dupes",
    "fund",
    "get",
    "help",
    "help-search",
    "hook",
    "init",
    "install",
    "install-ci-test",
    "install-test",
    "link",
    "ll",
    "login",
    "logout",
    "ls",
    "org",
    "outdated",
    "owner",
    "pack",
    "ping",
    "pkg",
    "prefix",
    "profile",
    "prune",
    "publish",
    "query",
    "rebuild",
    "repo",
    "restart",
    "root",
    "run-script",
    "sbom",
    "search",
    "set",
    "shrinkwrap",
    "star",
    "stars",
    "start",
    "stop",
    "team",
    "test",
    "token",
    "undeprecate",
    "uninstall",
    "unpublish",
    "unstar",
    "update",
    "version",
    "view",
    "whoami",
];

static NPM_SUBCOMMANDS: Subcommands = Subcommands {
    table: npm_table,
    aliases: &[
        ("author", "owner"),
        ("home", "docs"),
        ("issues", "bugs"),
        ("info", "view"),
        ("show", "view"),
        ("find", "search"),
        ("add", "install"),
        ("unlink", "uninstall"),
        ("remove", "uninstall"),
        ("rm", "uninstall"),
        ("r", "uninstall"),
        ("un", "uninstall"),
        ("rb", "rebuild"),
        ("list", "ls"),
        ("la", "ls"),
        ("ln", "link"),
        ("create", "init"),
        ("i", "install"),
        ("in", "install"),
        ("ins", "install"),
        ("inst", "install"),
        ("insta", "install"),
        ("instal", "install"),
        ("isnt", "install"),
        ("isnta", "install"),
        ("isntal", "install"),
        ("isntall", "install"),
        ("it", "install-test"),
        ("cit", "install-ci-test"),
        ("clean-install", "ci"),
        ("up", "update"),
        ("upgrade", "update"),
        ("udpate", "update"),
        ("c", "config"),
        ("s", "search"),
        ("se", "search"),
        ("tst", "test"),
        ("t", "test"),
        ("ddp", "dedupe"),
        ("v", "view"),
        ("run", "run-script"),
        ("rum", "run-script"),
        ("urn", "run-script"),
        ("x", "exec"),
        ("why", "explain"),
        ("login", "adduser"),
        ("add-user", "adduser"),
    ],
    globals_anywhere: true,
    abbreviated: NPM_COMMANDS,
    toolchain: false,
};

fn npm_table(sub: &str) -> Option<&'static Table> {
    // Every npm option is a configuration option, accepted by every command.
    static COMMAND: Table = Table::new("");
    NPM_COMMANDS.contains(&sub).then_some(&COMMAND)
}

static CARGO: Table = Table::new(
    "v|verbose q|quiet color= C= locked offline frozen config= Z= list explain= h|help \
     V|version",
);

static CARGO_SUBCOMMANDS: Subcommands = Subcommands {
    table: cargo_table,
    aliases: &[
        ("b", "build"),
        ("c", "check"),
        ("d", "doc"),
        ("t", "test"),
        ("r", "run"),
        ("rm", "remove"),
    ],
    globals_anywhere: true,
    abbreviated: &[],
    toolchain: true,
};

fn cargo_table(sub: &str) -> Option<&'static Table> {
    static BUILD: Table = Table::new(
        "p|package= workspace|all exclude= lib bins bin= examples example= tests test= benches \
         bench= all-targets F|features= all-features no-default-features r|release profile= \
         j|jobs= keep-going target= target-dir= manifest-path= message-format= lockfile-path= \
         ignore-rust-version timings? unit-graph future-incompat-report no-run no-fail-fast \
         doc open no-deps document-private-items artifact-dir= fix allow-dirty allow-staged",
    );
    static PUBLISH: Table = Table::new(
        "dry-run n no-verify allow-dirty index= registry= token= p|package= j|jobs= keep-going \
         target= target-dir= manifest-path= F|features= all-features no-default-features \
         workspace exclude= lockfile-path=",
    );
    static INSTALL: Table = Table::new(
        "version|vers= git= branch= tag= rev= path= list root= index= registry= f|force \
         no-track bin= bins example= examples F|features= all-features no-default-features \
         profile= debug target= target-dir= j|jobs= ignore-rust-version message-format= \
         timings? keep-going",
    );
    static OTHER: Table = Table::new(
        "p|package= manifest-path= registry= index= token= F|features= dry-run workspace \
         target= target-dir=",
    );
    Some(match sub {
        "build" | "check" | "test" | "bench" | "doc" | "clippy" | "fix" | "rustc" | "rustdoc" | "run" => {
            &BUILD
        }
        "publish" | "package" => &PUBLISH,
        "install" | "uninstall" => &INSTALL,
        "yank" | "owner" | "login" | "logout" | "add" | "remove" | "update" | "fetch" | "clean" | "new"
        | "init" | "search" | "tree" | "vendor" | "metadata" | "fmt" => &OTHER,
        _ => return None,
    })
}
