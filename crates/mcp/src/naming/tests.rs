use super::*;

fn valid(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn names_for(server: &str, tools: &[&str]) -> Vec<Option<String>> {
    names_within(server, tools, NameLimit::default())
}

fn names_within(server: &str, tools: &[&str], limit: NameLimit) -> Vec<Option<String>> {
    let slugs = server_slugs([server], limit);
    tool_names(server, &slugs[server], tools, limit)
}

fn one(server: &str, tool: &str) -> String {
    names_for(server, &[tool])[0].clone().unwrap()
}

#[test]
fn naming_table() {
    // (server, tool) → exact name, for names that need no hash.
    let exact = [
        ("github", "Search Issues", "mcp_github_search_issues"),
        ("My-Server", "create.issue", "mcp_my_server_create_issue"),
        ("filesystem", "read_file", "mcp_filesystem_read_file"),
        ("filesystem", "readFile", "mcp_filesystem_readfile"),
        ("a__b", "x_-y", "mcp_a__b_x_y"),
        (
            "everything",
            "get-tiny-image",
            "mcp_everything_get_tiny_image",
        ),
        ("time", "convert_time", "mcp_time_convert_time"),
        ("Ärger", "Öffnen", "mcp_rger_ffnen"),
        ("srv", "  padded name  ", "mcp_srv_padded_name"),
    ];
    for (server, tool, want) in exact {
        assert_eq!(one(server, tool), want, "({server:?}, {tool:?})");
    }
}

#[test]
fn non_ascii_names_get_a_stable_hash() {
    let a = one("time", "查询");
    let b = one("time", "查询时间");
    assert!(a.starts_with("mcp_time_tool_"), "{a}");
    assert!(b.starts_with("mcp_time_tool_"), "{b}");
    assert_ne!(a, b);
    assert_eq!(a.len(), "mcp_time_tool_".len() + 6);
    assert_eq!(a, one("time", "查询"), "same input, same name");
    assert!(valid(&a) && valid(&b));
}

#[test]
fn over_long_names_are_cut_and_hashed() {
    let long = "x".repeat(80);
    let name = one("server", &long);
    assert!(name.len() <= MAX_NAME_LEN, "{name}");
    assert!(name.starts_with("mcp_server_xxxx"), "{name}");
    let other = one("server", &format!("{long}y"));
    assert_ne!(name, other, "two long names sharing a prefix stay apart");
    // Exactly at the limit: no hash.
    let fits = "y".repeat(MAX_NAME_LEN - "mcp_server_".len());
    assert_eq!(one("server", &fits), format!("mcp_server_{fits}"));
    let over = format!("{fits}z");
    assert_ne!(one("server", &over), format!("mcp_server_{over}"));
}

#[test]
fn colliding_names_all_get_hashes_whatever_the_order() {
    let tools = ["create-issue", "create_issue", "list_issues"];
    let forward = names_for("gh", &tools);
    let mut reversed_input = tools;
    reversed_input.reverse();
    let mut backward = names_for("gh", &reversed_input);
    backward.reverse();
    assert_eq!(
        forward, backward,
        "order of the server's list does not matter"
    );
    let forward: Vec<String> = forward.into_iter().map(Option::unwrap).collect();
    assert!(
        forward[0].starts_with("mcp_gh_create_issue_"),
        "{}",
        forward[0]
    );
    assert!(
        forward[1].starts_with("mcp_gh_create_issue_"),
        "{}",
        forward[1]
    );
    assert_ne!(forward[0], forward[1]);
    assert_eq!(forward[2], "mcp_gh_list_issues");
}

#[test]
fn a_hashed_name_never_takes_a_plain_one() {
    // A tool literally named like another tool's hashed name.
    let hashed = one("gh", "查询");
    let literal = hashed.trim_start_matches("mcp_gh_").to_owned();
    let names = names_for("gh", &["查询", &literal]);
    let names: Vec<String> = names.into_iter().map(Option::unwrap).collect();
    assert_ne!(names[0], names[1]);
    assert!(names.iter().all(|n| valid(n)));
}

#[test]
fn the_same_tool_listed_twice_is_named_once() {
    let names = names_for("dup", &["echo", "echo"]);
    assert_eq!(names.iter().filter(|n| n.is_some()).count(), 1);
}

#[test]
fn server_slugs_are_prefix_free() {
    let configured = [
        "git",
        "git_hub",
        "github",
        "My-Server",
        "my server",
        "my",
        "查询",
        "服务",
    ];
    let slugs = server_slugs(configured, NameLimit::default());
    assert_eq!(slugs["git"], "git");
    assert_eq!(slugs["github"], "github");
    assert_eq!(slugs["my"], "my");
    let values: Vec<&String> = slugs.values().collect();
    for a in &values {
        for b in &values {
            if a != b {
                assert!(
                    !b.starts_with(&format!("{a}_")),
                    "`{b}` starts with `{a}_`: {slugs:?}"
                );
            }
        }
        assert!(a.len() <= MAX_SERVER_SLUG_LEN, "{a}");
        assert!(valid(a), "{a}");
    }
    let unique: BTreeSet<&String> = values.iter().copied().collect();
    assert_eq!(unique.len(), configured.len(), "{slugs:?}");
    // Input order does not matter.
    let mut reversed = configured;
    reversed.reverse();
    assert_eq!(server_slugs(reversed, NameLimit::default()), slugs);
}

#[test]
fn names_from_different_servers_never_collide() {
    let servers = ["git", "git_hub", "a", "a_b", "a_b_c"];
    let tools = [
        "hub_log",
        "log",
        "b_c_d",
        "c_d",
        "d",
        "b",
        "查询",
        &"z".repeat(90),
    ];
    let limit = NameLimit::default();
    let slugs = server_slugs(servers, limit);
    let mut table = NameTable::new();
    for server in servers {
        for name in tool_names(server, &slugs[server], &tools, limit)
            .into_iter()
            .flatten()
        {
            assert!(valid(&name), "{name}");
            let tool = tools
                .iter()
                .zip(tool_names(server, &slugs[server], &tools, limit))
                .find(|(_, n)| n.as_deref() == Some(name.as_str()))
                .map(|(t, _)| (*t).to_owned())
                .unwrap();
            let address = ToolAddress {
                server: server.to_owned(),
                tool,
            };
            assert!(table.insert(name.clone(), address), "duplicate name {name}");
        }
    }
    assert_eq!(table.len(), servers.len() * tools.len());
}

#[test]
fn long_server_names_are_shortened() {
    let server = "an-extremely-long-server-name-that-keeps-going-and-going";
    let slugs = server_slugs([server], NameLimit::default());
    let slug = &slugs[server];
    assert!(slug.len() <= MAX_SERVER_SLUG_LEN, "{slug}");
    assert!(slug.starts_with("anextremely"), "{slug}");
    let name = one(server, "read_file");
    assert!(valid(&name), "{name}");
    assert!(name.ends_with("_read_file"), "{name}");
}

#[test]
fn reverse_map_is_exact() {
    let mut table = NameTable::new();
    let git = ToolAddress {
        server: "git".into(),
        tool: "log".into(),
    };
    let github = ToolAddress {
        server: "github".into(),
        tool: "list_commits".into(),
    };
    assert!(table.insert("mcp_git_log".into(), git.clone()));
    assert!(table.insert("mcp_github_list_commits".into(), github.clone()));
    assert!(
        !table.insert("mcp_git_log".into(), github.clone()),
        "taken names stay"
    );
    assert_eq!(table.resolve("mcp_git_log"), Some(&git));
    assert_eq!(table.resolve("mcp_github_list_commits"), Some(&github));
    for near_miss in [
        "mcp_git",
        "mcp_git_",
        "mcp_git_lo",
        "mcp_github",
        "mcp_git_log_x",
        "MCP_GIT_LOG",
    ] {
        assert_eq!(table.resolve(near_miss), None, "{near_miss}");
    }
    let names: Vec<&str> = table.iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["mcp_git_log", "mcp_github_list_commits"]);
}

/// Every cap from the shortest to the longest: names within it, valid, unique across servers
/// (the reverse map takes every one), and plain names kept whenever they fit.
#[test]
fn every_limit_keeps_names_within_it_and_unique() {
    let servers = [
        "git",
        "git_hub",
        "github",
        "an-extremely-long-server-name-that-keeps-going",
        "查询",
        "a",
        "a_b",
    ];
    let tools = [
        "log",
        "hub_log",
        "Search Issues",
        "create-issue",
        "create_issue",
        "查询",
        &"x".repeat(60),
        &"x".repeat(61),
        "browser_take_screenshot_of_the_current_page_with_annotations",
    ];
    for max_len in NameLimit::MIN..=NameLimit::MAX {
        let limit = NameLimit::new(max_len).unwrap();
        let slugs = server_slugs(servers, limit);
        let mut table = NameTable::new();
        for server in servers {
            let slug = &slugs[server];
            assert!(slug.len() <= limit.server_slug_max(), "{max_len}: {slug}");
            let names = tool_names(server, slug, &tools, limit);
            for (tool, name) in tools.iter().zip(&names) {
                let name = name
                    .as_deref()
                    .unwrap_or_else(|| panic!("{max_len}: {tool} unnamed"));
                assert!(name.len() <= max_len, "{max_len}: {name} is {}", name.len());
                assert!(valid(name), "{max_len}: {name}");
                let address = ToolAddress {
                    server: server.to_owned(),
                    tool: (*tool).to_owned(),
                };
                assert!(
                    table.insert(name.to_owned(), address.clone()),
                    "{max_len}: {name} twice"
                );
                assert_eq!(table.resolve(name), Some(&address));
            }
        }
        assert_eq!(table.len(), servers.len() * tools.len(), "{max_len}");
    }
}

/// What a name should be.
enum Want {
    /// Exactly this.
    Exact(&'static str),
    /// `mcp_<server>_<tool>`, unchanged.
    Plain,
    /// Cut and hashed to exactly this length.
    Hashed(usize),
}

/// The same tools under the caps front ends use: a name that fits keeps its plain form, a
/// longer one is cut and hashed to exactly the cap.
#[test]
fn names_under_the_serve_cap() {
    let serve = NameLimit::new(54).unwrap();
    let api = NameLimit::default();
    let long = "x".repeat(50);
    let table = [
        (
            "github",
            "Search Issues",
            api,
            Want::Exact("mcp_github_search_issues"),
        ),
        (
            "github",
            "Search Issues",
            serve,
            Want::Exact("mcp_github_search_issues"),
        ),
        ("srv", long.as_str(), api, Want::Plain),
        ("srv", long.as_str(), serve, Want::Hashed(54)),
        (
            "playwright",
            "browser_take_screenshot_of_the_page",
            serve,
            Want::Plain,
        ),
        (
            "playwright",
            "browser_take_screenshot_of_the_whole_page",
            serve,
            Want::Hashed(54),
        ),
        (
            "playwright",
            "browser_take_screenshot_of_the_whole_page",
            api,
            Want::Plain,
        ),
    ];
    for (server, tool, limit, want) in table {
        let name = names_within(server, &[tool], limit)[0].clone().unwrap();
        match want {
            Want::Exact(exact) => assert_eq!(name, exact),
            Want::Plain => assert_eq!(name, format!("mcp_{server}_{tool}")),
            Want::Hashed(len) => {
                assert_eq!(name.len(), len, "{name}");
                assert!(name.starts_with(&format!("mcp_{server}_")), "{name}");
            }
        }
    }
    let cut = names_within("srv", &[&long], serve)[0].clone().unwrap();
    assert_eq!(cut, format!("mcp_srv_{}_{}", "x".repeat(39), &cut[48..]));
}

#[test]
fn limits_out_of_range_are_refused() {
    for bad in [0, 10, NameLimit::MIN - 1, NameLimit::MAX + 1, 128] {
        let err = NameLimit::new(bad).unwrap_err();
        assert_eq!(err.given, bad);
        assert!(err.to_string().contains("24 to 64"), "{err}");
    }
    assert_eq!(NameLimit::new(24).unwrap().server_slug_max(), 9);
    assert_eq!(NameLimit::new(54).unwrap().server_slug_max(), 24);
}
