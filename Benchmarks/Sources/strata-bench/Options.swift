/// Command-line options.
struct Options {
    var sizes = [10_000, 100_000, 1_000_000]
    var engines = ["strata", "lmdb", "sqlite"]
    var output: String?
    var tsv: String?
    var directory: String?
    var commits = 1_000
    var repeats = 5
    var warmup = true

    static let usage = """
        usage: strata-bench [--sizes 10000,100000,1000000] [--only strata,lmdb,sqlite] [--commits 1000]
                            [--repeat 3] [--output PATH] [--dir DIRECTORY] [--no-warmup]
                            [--tsv PATH] [--encrypted]

          --sizes     key counts to run, comma-separated (default 10000,100000,1000000)
          --only      engines to run, comma-separated: strata, strata-encrypted, lmdb, sqlite (default strata,
                      lmdb, sqlite)
          --encrypted also run Strata on an encrypted file (strata-encrypted: the same workloads with a 64-byte
                      encryptionKey), shown beside plain Strata with the encrypted/plain ratio
          --commits   number of single-put durable commits (default 1000)
          --repeat    runs of every workload per engine and size, each on fresh databases; the report shows the
                      median (default 5)
          --output    also write the Markdown report to PATH
          --dir       where to create the temporary databases (default: the system temporary directory);
                      it must be on a real disk, not tmpfs, for the durable-commit numbers to mean anything
          --no-warmup skip the warm-up round
          --tsv       also write every cell as a tab-separated line to PATH (for strata-report)
        """

    static func parse(_ arguments: [String]) throws(BenchError) -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        var encrypted = false
        func value(for flag: String) throws(BenchError) -> String {
            guard let value = iterator.next() else { throw .usage("\(flag) needs a value\n\n\(usage)") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--sizes":
                let list = try value(for: argument)
                var sizes: [Int] = []
                for item in list.split(separator: ",") {
                    guard let size = Int(item.replacingOccurrences(of: "_", with: "")), size > 0 else {
                        throw .usage("bad size '\(item)'\n\n\(usage)")
                    }
                    sizes.append(size)
                }
                guard !sizes.isEmpty else { throw .usage("--sizes is empty\n\n\(usage)") }
                options.sizes = sizes
            case "--only":
                let list = try value(for: argument).lowercased().split(separator: ",").map(String.init)
                for engine in list where !["strata", "strata-encrypted", "lmdb", "sqlite"].contains(engine) {
                    throw .usage("unknown engine '\(engine)'\n\n\(usage)")
                }
                guard !list.isEmpty else { throw .usage("--only is empty\n\n\(usage)") }
                options.engines = list
            case "--commits":
                guard let commits = Int(try value(for: argument)), commits > 0 else {
                    throw .usage("--commits needs a positive number\n\n\(usage)")
                }
                options.commits = commits
            case "--repeat":
                guard let repeats = Int(try value(for: argument)), repeats > 0 else {
                    throw .usage("--repeat needs a positive number\n\n\(usage)")
                }
                options.repeats = repeats
            case "--output":
                options.output = try value(for: argument)
            case "--dir":
                options.directory = try value(for: argument)
            case "--tsv":
                options.tsv = try value(for: argument)
            case "--encrypted":
                encrypted = true
            case "--no-warmup":
                options.warmup = false
            case "--help", "-h":
                throw .usage(usage)
            default:
                throw .usage("unknown argument '\(argument)'\n\n\(usage)")
            }
        }
        if encrypted && !options.engines.contains(EncryptedStrataEngine.slug) {
            // Right after plain Strata, so that the two take turns closest together.
            let index = options.engines.firstIndex(of: StrataEngine.slug).map { $0 + 1 } ?? options.engines.count
            options.engines.insert(EncryptedStrataEngine.slug, at: index)
        }
        return options
    }
}
