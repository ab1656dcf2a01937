<?php
/**
 * Removes the plugin's options, on every blog of a network.
 *
 * @package RamjetCache
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

$ramjet_cache_options = array( 'ramjet_cache_settings', 'ramjet_cache_purge_queue' );
if ( is_multisite() ) {
	foreach ( get_sites( array( 'fields' => 'ids' ) ) as $ramjet_cache_blog ) {
		switch_to_blog( $ramjet_cache_blog );
		array_map( 'delete_option', $ramjet_cache_options );
		restore_current_blog();
	}
} else {
	array_map( 'delete_option', $ramjet_cache_options );
}
