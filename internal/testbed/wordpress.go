package testbed

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wpSource is Debian's WordPress package.
const wpSource = "/usr/share/wordpress"

// WordPress database credentials, as InstallWordPress's wp-config.php
// names them.
const (
	wpDatabase = "wp" // and its user
	wpPassword = "wp-pass"
)

// WordPressConfig says what InstallWordPress puts into the tree.
type WordPressConfig struct {
	DB *MariaDB // where the database is created
	// Content maps paths under wp-content ("plugins/NAME",
	// "themes/NAME") to directories copied there.
	Content map[string]string
	// Defines are extra wp-config.php string constants (a plugin's
	// settings).
	Defines map[string]string
	// Docroot is where the tree goes (its parent must exist); "" = a
	// new temporary directory's "wp".
	Docroot string
	// Database names the database and its user, so that several
	// installs share one MariaDB; "" = "wp".
	Database string
}

// WordPress is a WordPress tree with its config and database, not yet
// installed: wp_install() with the site's title, users and content is the
// caller's PHP, since that is what each site differs in.
type WordPress struct {
	Dir     string // temporary directory every user can read; holds Docroot
	Docroot string // the WordPress tree
	Content string // its wp-content
}

// InstallWordPress copies Debian's WordPress into a temporary docroot
// (PHP resolves __DIR__ through symlinks, so a tree of symlinks would
// read Debian's /etc/wordpress config), writes its own wp-config.php and
// a wp-content with cfg.Content, and creates the database and its user
// in cfg.DB. Everything is readable by every user: ramjet runs PHP as
// nobody in docroot mode.
func InstallWordPress(t testing.TB, cfg WordPressConfig) *WordPress {
	t.Helper()
	if _, err := os.Stat(wpSource + "/wp-load.php"); err != nil {
		t.Fatalf("testbed: %s not found: install the Debian package wordpress: %v", wpSource, err)
	}
	wp := &WordPress{Docroot: cfg.Docroot}
	if wp.Docroot == "" {
		wp.Dir = PublicDir(t)
		wp.Docroot = filepath.Join(wp.Dir, "wp")
	} else {
		wp.Dir = filepath.Dir(wp.Docroot)
	}
	db := cfg.Database
	if db == "" {
		db = wpDatabase
	}
	wp.Content = filepath.Join(wp.Docroot, "wp-content")
	if out, err := RunCmd(exec.Command("cp", "-rL", wpSource, wp.Docroot), setupTimeout); err != nil {
		t.Fatalf("testbed: copy %s: %v\n%s", wpSource, err, out)
	}
	if err := wp.writeContent(cfg.Content); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(wp.Docroot, "wp-config.php")
	if err := os.WriteFile(config, []byte(wpConfig(db, cfg.DB.Socket, wp.Content, cfg.Defines)), 0o644); err != nil {
		t.Fatalf("testbed: wp-config.php: %v", err)
	}
	cfg.DB.Exec(t, fmt.Sprintf("CREATE DATABASE %s; CREATE USER '%s'@'localhost' IDENTIFIED BY '%s'; GRANT ALL ON %[1]s.* TO '%[2]s'@'localhost';",
		db, db, wpPassword))
	return wp
}

// writeContent replaces Debian's wp-content with an empty one holding
// copies of the given directories: a host's WordPress has its plugins
// and themes inside its docroot, which is all its PHP may read (ramjet
// confines it there).
func (wp *WordPress) writeContent(links map[string]string) error {
	if err := os.RemoveAll(wp.Content); err != nil {
		return fmt.Errorf("testbed: wp-content: %w", err)
	}
	for _, d := range []string{"plugins", "themes", "uploads"} {
		if err := os.MkdirAll(filepath.Join(wp.Content, d), 0o755); err != nil {
			return fmt.Errorf("testbed: wp-content: %w", err)
		}
	}
	for link, target := range links {
		if out, err := RunCmd(exec.Command("cp", "-rL", target, filepath.Join(wp.Content, link)), setupTimeout); err != nil {
			return fmt.Errorf("testbed: wp-content/%s: %w\n%s", link, err, out)
		}
	}
	return nil
}

func wpConfig(db, dbSock, content string, defines map[string]string) string {
	var extra strings.Builder
	for _, name := range slices.Sorted(maps.Keys(defines)) {
		fmt.Fprintf(&extra, "define( '%s', '%s' );\n", name, phpQuote(defines[name]))
	}
	return fmt.Sprintf(`<?php
define( 'DB_NAME', '%[1]s' );
define( 'DB_USER', '%[2]s' );
define( 'DB_PASSWORD', '%[3]s' );
define( 'DB_HOST', 'localhost:%[4]s' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
define( 'AUTH_KEY', 'testbed-auth' );
define( 'SECURE_AUTH_KEY', 'testbed-secure-auth' );
define( 'LOGGED_IN_KEY', 'testbed-logged-in' );
define( 'NONCE_KEY', 'testbed-nonce' );
define( 'AUTH_SALT', 'testbed-auth-salt' );
define( 'SECURE_AUTH_SALT', 'testbed-secure-auth-salt' );
define( 'LOGGED_IN_SALT', 'testbed-logged-in-salt' );
define( 'NONCE_SALT', 'testbed-nonce-salt' );
define( 'WP_CONTENT_DIR', '%[5]s' );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
define( 'WP_ACCESSIBLE_HOSTS', '127.0.0.1' );
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_AUTO_UPDATE_CORE', false );
%[6]s$table_prefix = 'wp_';
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
`, db, db, wpPassword, dbSock, phpQuote(content), extra.String())
}

// phpQuote escapes s for a single-quoted PHP string.
func phpQuote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}
