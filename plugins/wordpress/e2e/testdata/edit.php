<?php
/**
 * Changes content as an admin would, from PHP CLI, so the plugin purges
 * through ramjet's admin API: php edit.php DOCROOT ACTION ID [VALUE].
 * Actions: title (post title), approve (comment).
 *
 * @package RamjetE2E
 */

$_SERVER['HTTP_HOST']   = 'wp.test';
$_SERVER['REQUEST_URI'] = '/';
require $argv[1] . '/wp-load.php';
wp_set_current_user( 1 );
switch ( $argv[2] ) {
	case 'title':
		$r = wp_update_post(
			array(
				'ID'         => (int) $argv[3],
				'post_title' => $argv[4],
			),
			true
		);
		break;
	case 'approve':
		$r = wp_set_comment_status( (int) $argv[3], 'approve', true );
		break;
	default:
		$r = new WP_Error( 'usage', 'unknown action ' . $argv[2] );
}
if ( is_wp_error( $r ) || false === $r ) {
	fwrite( STDERR, 'edit failed: ' . ( is_wp_error( $r ) ? $r->get_error_message() : 'false' ) . "\n" );
	exit( 1 );
}
// The plugin delivers its purges at shutdown; report what is still queued.
register_shutdown_function(
	static function () {
		echo wp_json_encode( array( 'queued' => get_option( 'ramjet_cache_purge_queue', null ) ) ), "\n";
	}
);
