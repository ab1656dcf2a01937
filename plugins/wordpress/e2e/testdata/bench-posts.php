<?php
/**
 * Adds content for bench/run's WordPress group on top of setup.php:
 * php bench-posts.php DOCROOT N. N more published posts (a few paragraphs
 * each, category News), so the home page lists a full page of posts, and
 * the pending comment on post B approved plus two more, so the post page
 * shows comments.
 *
 * @package RamjetE2E
 */

$_SERVER['HTTP_HOST']   = 'wp.test';
$_SERVER['REQUEST_URI'] = '/';

/**
 * No mail on this machine: new comments would call sendmail.
 */
function wp_mail() {
	return true;
}

require $argv[1] . '/wp-load.php';
wp_set_current_user( 1 );

$news   = get_term_by( 'slug', 'news', 'category' );
$writer = get_user_by( 'login', 'writer' );
$para   = '<!-- wp:paragraph --><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.</p><!-- /wp:paragraph -->';
$n      = (int) $argv[2];
for ( $i = 1; $i <= $n; $i++ ) {
	$id = wp_insert_post(
		array(
			'post_title'    => 'Bench post ' . $i,
			'post_name'     => 'bench-post-' . $i,
			'post_content'  => str_repeat( $para . "\n", 4 ),
			'post_status'   => 'publish',
			'post_author'   => $writer->ID,
			'post_date'     => sprintf( '2024-02-%02d 10:00:00', $i ),
			'post_category' => array( $news->term_id ),
			'tags_input'    => array( 'featured' ),
		),
		true
	);
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, 'insert: ' . $id->get_error_message() . "\n" );
		exit( 1 );
	}
}

$post_b = get_page_by_path( 'post-b', OBJECT, 'post' );
foreach ( get_comments( array( 'status' => 'hold' ) ) as $c ) {
	wp_set_comment_status( $c->comment_ID, 'approve' );
}
for ( $i = 1; $i <= 2; $i++ ) {
	wp_insert_comment(
		array(
			'comment_post_ID'      => $post_b->ID,
			'comment_author'       => 'Reader ' . $i,
			'comment_author_email' => 'reader' . $i . '@example.com',
			'comment_content'      => 'Bench comment ' . $i . ': thanks for the post.',
			'comment_approved'     => 1,
		)
	);
}
echo wp_json_encode( array( 'posts' => $n ) ), "\n";
