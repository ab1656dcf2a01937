<?php
/**
 * Installs WordPress for the end-to-end test and creates its content.
 * Run from PHP CLI: php setup.php DOCROOT [HOST]. Prints the created ids as
 * JSON. HOST (default wp.test) is the site's; ramjet-cache is activated
 * when it is in wp-content/plugins.
 *
 * @package RamjetE2E
 */

$_SERVER['HTTP_HOST']   = isset( $argv[2] ) ? $argv[2] : 'wp.test';
$_SERVER['REQUEST_URI'] = '/';
define( 'WP_INSTALLING', true );

/**
 * No mail on this machine: wp_install() would call sendmail.
 */
function wp_mail() {
	return true;
}

require $argv[1] . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';

$result = wp_install( 'Ramjet E2E', 'admin', 'admin@example.com', true, '', 'admin-pass' );
update_option( 'siteurl', 'http://' . $_SERVER['HTTP_HOST'] );
update_option( 'home', 'http://' . $_SERVER['HTTP_HOST'] );
switch_theme( 'ramjet-e2e' );
global $wp_rewrite;
$wp_rewrite->set_permalink_structure( '/%postname%/' );
$wp_rewrite->flush_rules( false );

// Default content: keep only ours.
wp_delete_post( 1, true );
wp_delete_post( 2, true );

$writer = wp_insert_user(
	array(
		'user_login'   => 'writer',
		'user_pass'    => 'writer-pass',
		'user_email'   => 'writer@example.com',
		'display_name' => 'Wendy Writer',
		'role'         => 'author',
	)
);
$news   = wp_insert_term( 'News', 'category', array( 'slug' => 'news' ) );
$other  = wp_insert_term( 'Other', 'category', array( 'slug' => 'other' ) );
$ids    = array(
	'writer' => $writer,
	'news'   => $news['term_id'],
	'other'  => $other['term_id'],
);
$posts  = array(
	'a' => array( '2024-01-01 10:00:00', $other['term_id'], array() ),
	'b' => array( '2024-01-02 10:00:00', $news['term_id'], array( 'featured' ) ),
	'c' => array( '2024-01-03 10:00:00', $other['term_id'], array() ),
	'd' => array( '2024-01-04 10:00:00', $news['term_id'], array( 'featured' ) ),
);
foreach ( $posts as $slug => $p ) {
	$ids[ 'post_' . $slug ] = wp_insert_post(
		array(
			'post_title'    => 'Post ' . strtoupper( $slug ) . ' original',
			'post_name'     => 'post-' . $slug,
			'post_content'  => 'Body of post ' . $slug . '.',
			'post_status'   => 'publish',
			'post_author'   => $writer,
			'post_date'     => $p[0],
			'post_category' => array( $p[1] ),
			'tags_input'    => $p[2],
		),
		true
	);
}
$ids['comment'] = wp_insert_comment(
	array(
		'comment_post_ID'      => $ids['post_b'],
		'comment_author'       => 'Visitor',
		'comment_author_email' => 'visitor@example.com',
		'comment_content'      => 'RJ-COMMENT-MARKER nice post',
		'comment_approved'     => 0,
	)
);
if ( ! file_exists( WP_PLUGIN_DIR . '/ramjet-cache' ) ) {
	echo wp_json_encode( $ids ), "\n";
	exit( 0 );
}
$activated = activate_plugin( 'ramjet-cache/ramjet-cache.php' );
if ( is_wp_error( $activated ) ) {
	fwrite( STDERR, 'activate: ' . $activated->get_error_message() . "\n" );
	exit( 1 );
}
update_option(
	'ramjet_cache_settings',
	array_merge(
		get_option( 'ramjet_cache_settings', array() ),
		array(
			'proxy' => getenv( 'RAMJET_E2E_PROXY' ) ? getenv( 'RAMJET_E2E_PROXY' ) : 'auto',
			'esi'   => getenv( 'RAMJET_E2E_ESI' ) ? getenv( 'RAMJET_E2E_ESI' ) : 'auto',
		)
	)
);
echo wp_json_encode( $ids ), "\n";
